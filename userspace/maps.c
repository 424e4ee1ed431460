// SPDX-License-Identifier: GPL-2.0
/*
 * maps.c - /proc/PID/{maps,smaps,numa_maps} parsing and the analysis of
 * adjacent anonymous VMAs that were not merged.
 *
 * What /proc shows (fs/proc/task_mmu.c, show_map_vma(), 6.1 and 6.12):
 * the offset column is vm_pgoff << PAGE_SHIFT only for VMAs with a
 * vm_file; for anonymous VMAs it is always 0.  So from /proc alone the
 * pgoff of an anonymous VMA is unknown, and a pair that is separate
 * despite equal flags differs in pgoff or in anon_vma; we cannot say
 * which.  maps_finish() treats the anonymous offsets as real only if some
 * private anonymous VMA shows a non-zero offset (text that did not come
 * from these kernels' /proc, e.g. a future source of anon pgoffs).
 *
 * With the module loaded, VMAMERGE_IOC_VMAS supplies what /proc hides:
 * maps_merge_module() adds the real pgoff and the anon_vma sharing flags
 * of each VMA, and the pairs are classified exactly (pgoff, anon_vma or
 * both; "unknown" if neither explains the pair).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "vmamerge.h"	/* module/uapi */
#include "maps.h"

void vma_list_init(struct vma_list *list)
{
	memset(list, 0, sizeof(*list));
	list->page_shift = 12;
}

void vma_list_free(struct vma_list *list)
{
	size_t i;

	for (i = 0; i < list->nr; i++) {
		free(list->v[i].name);
		free(list->v[i].vmflags);
		free(list->v[i].policy);
	}
	free(list->v);
	list->v = NULL;
	list->nr = list->cap = 0;
}

static char *dup_range(const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse at least one digit in base 16 or 10; advance *p. */
static int parse_num(const char **p, const char *end, int base,
		     unsigned long long *out)
{
	const char *s = *p;
	unsigned long long v = 0;
	int d;

	while (s < end) {
		d = base == 16 ? hexval(*s) : (isdigit((unsigned char)*s) ? *s - '0' : -1);
		if (d < 0)
			break;
		if (v > (~0ULL - d) / base)
			return -1;
		v = v * base + d;
		s++;
	}
	if (s == *p)
		return -1;
	*out = v;
	*p = s;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

int maps_parse_header(const char *line, size_t len, struct vma_info *vma)
{
	const char *p = line, *end = line + len;
	unsigned long long maj, min;
	int i;

	memset(vma, 0, sizeof(*vma));
	if (parse_num(&p, end, 16, &vma->start) || expect(&p, end, '-') ||
	    parse_num(&p, end, 16, &vma->end) || expect(&p, end, ' '))
		return -1;
	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		static const char *const ok[4] = { "r-", "w-", "x-", "ps" };

		if (!strchr(ok[i], p[i]))
			return -1;
		vma->perms[i] = p[i];
	}
	p += 4;
	if (expect(&p, end, ' ') || parse_num(&p, end, 16, &vma->offset) ||
	    expect(&p, end, ' ') || parse_num(&p, end, 16, &maj) ||
	    expect(&p, end, ':') || parse_num(&p, end, 16, &min) ||
	    expect(&p, end, ' ') || parse_num(&p, end, 10, &vma->inode))
		return -1;
	if (vma->end < vma->start || maj > 0xfffff || min > 0xfffff)
		return -1;
	vma->dev_major = maj;
	vma->dev_minor = min;
	if (p < end && *p != ' ')
		return -1;
	while (p < end && *p == ' ')
		p++;
	vma->name = dup_range(p, end - p);
	return vma->name ? 0 : -2;
}

static int list_append(struct vma_list *list, const struct vma_info *vma)
{
	if (list->nr == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		struct vma_info *v = realloc(list->v, cap * sizeof(*v));

		if (!v)
			return -2;
		list->v = v;
		list->cap = cap;
	}
	list->v[list->nr++] = *vma;
	return 0;
}

/* smaps "Key:   value" line (letters, digits, '_' then ':'). */
static bool is_key_line(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '_'))
		i++;
	return i > 0 && i < len && line[i] == ':';
}

static int parse_vmflags(struct vma_list *list, const char *line, size_t len)
{
	struct vma_info *vma;
	const char *p = line + strlen("VmFlags:");
	const char *end = line + len;

	if (!list->nr)
		return -1;
	vma = &list->v[list->nr - 1];
	while (p < end && *p == ' ')
		p++;
	while (end > p && end[-1] == ' ')
		end--;
	free(vma->vmflags);
	vma->vmflags = dup_range(p, end - p);
	if (!vma->vmflags)
		return -2;
	list->have_vmflags = true;
	return 0;
}

static int parse_line(struct vma_list *list, const char *line, size_t len)
{
	struct vma_info vma;
	int ret;

	if (!len)
		return 0;
	if (len >= 8 && !strncmp(line, "VmFlags:", 8))
		return parse_vmflags(list, line, len);
	ret = maps_parse_header(line, len, &vma);
	if (ret == -1)
		return is_key_line(line, len) ? 0 : -1;
	if (ret)
		return ret;
	ret = list_append(list, &vma);
	if (ret)
		free(vma.name);
	return ret;
}

int maps_parse(struct vma_list *list, const char *text, size_t *bad_line)
{
	const char *p = text, *nl;
	size_t lineno = 0;
	int ret;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		lineno++;
		ret = parse_line(list, p, nl - p);
		if (ret) {
			if (bad_line)
				*bad_line = lineno;
			return ret;
		}
		p = *nl ? nl + 1 : nl;
	}
	return 0;
}

/* numa_maps tokens that follow the policy (show_numa_map()). */
static bool numa_is_attr(const char *tok, size_t len)
{
	static const char *const keys[] = {
		"file=", "anon=", "dirty=", "mapped=", "mapmax=", "swapcache=",
		"active=", "writeback=", "kernelpagesize_kB=",
	};
	size_t i;

	if ((len == 4 && !strncmp(tok, "heap", 4)) ||
	    (len == 5 && !strncmp(tok, "stack", 5)) ||
	    (len == 4 && !strncmp(tok, "huge", 4)))
		return true;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strncmp(tok, keys[i], strlen(keys[i])))
			return true;
	if (tok[0] == 'N' && len > 1 && isdigit((unsigned char)tok[1])) {
		for (i = 1; i < len && isdigit((unsigned char)tok[i]); i++)
			;
		return i < len && tok[i] == '=';
	}
	return false;
}

static struct vma_info *find_vma_start(struct vma_list *list,
				       unsigned long long start)
{
	size_t lo = 0, hi = list->nr, mid;

	/* maps lists VMAs in address order */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (list->v[mid].start == start)
			return &list->v[mid];
		if (list->v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int numa_line(struct vma_list *list, const char *line, size_t len)
{
	const char *p = line, *end = line + len, *pol, *pol_end, *tok;
	unsigned long long start;
	struct vma_info *vma;

	if (parse_num(&p, end, 16, &start) || expect(&p, end, ' '))
		return 0;	/* not ours to judge: ignore */
	pol = pol_end = p;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		tok = p;
		while (p < end && *p != ' ')
			p++;
		if (tok == p || numa_is_attr(tok, p - tok))
			break;
		pol_end = p;
	}
	vma = find_vma_start(list, start);
	if (!vma || pol_end == pol)
		return 0;
	free(vma->policy);
	vma->policy = dup_range(pol, pol_end - pol);
	return vma->policy ? 0 : -2;
}

int maps_apply_numa(struct vma_list *list, const char *text)
{
	const char *p = text, *nl;
	int ret;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		ret = numa_line(list, p, nl - p);
		if (ret)
			return ret;
		p = *nl ? nl + 1 : nl;
	}
	list->have_policy = true;
	return 0;
}

/*
 * Names an anonymous VMA can show: none, "[heap]" (the brk area; the name
 * comes from its position, not from the VMA) or "[anon:NAME]"
 * (PR_SET_VMA_ANON_NAME).  [stack], [vdso] etc. are not plain anon VMAs.
 */
static bool anon_name_ok(const char *name)
{
	return !name[0] || !strcmp(name, "[heap]") ||
	       !strncmp(name, "[anon:", 6);
}

bool vma_is_private_anon(const struct vma_info *vma)
{
	return vma->perms[3] == 'p' && !vma->inode && !vma->dev_major &&
	       !vma->dev_minor && anon_name_ok(vma->name);
}

static const char *norm_anon_name(const char *name)
{
	return strcmp(name, "[heap]") ? name : "";
}

bool anon_names_compatible(const char *a, const char *b)
{
	return !strcmp(norm_anon_name(a), norm_anon_name(b));
}

/* Is the two-letter mnemonic in the VmFlags string? */
bool vmflags_has(const char *flags, const char *mnemonic)
{
	size_t n = strlen(mnemonic);
	const char *p = flags;

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, mnemonic, n) && (p[n] == ' ' || !p[n]))
			return true;
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

/* Every flag of a except "sd" (VM_SOFTDIRTY, ignored by merging) is in b. */
static bool vmflags_subset(const char *a, const char *b)
{
	const char *p = a, *tok;
	char buf[16];
	size_t n;

	while (*p) {
		while (*p == ' ')
			p++;
		tok = p;
		while (*p && *p != ' ')
			p++;
		n = p - tok;
		if (!n || n >= sizeof(buf))
			continue;
		memcpy(buf, tok, n);
		buf[n] = '\0';
		if (strcmp(buf, "sd") && !vmflags_has(b, buf))
			return false;
	}
	return true;
}

bool vmflags_equal(const char *a, const char *b)
{
	return vmflags_subset(a, b) && vmflags_subset(b, a);
}

void maps_finish(struct vma_list *list)
{
	struct vma_info *vma;
	size_t i;

	list->anon_pgoff_visible = false;
	for (i = 0; i < list->nr; i++) {
		vma = &list->v[i];
		vma->anon = vma_is_private_anon(vma);
		if (vma->anon && vma->offset)
			list->anon_pgoff_visible = true;
	}
	for (i = 0; i < list->nr; i++) {
		vma = &list->v[i];
		vma->pgoff = vma->offset >> list->page_shift;
		vma->pgoff_known = !vma->anon || list->anon_pgoff_visible;
	}
}

size_t maps_merge_module(struct vma_list *list, const struct vmamerge_vma *kv,
			 size_t nr)
{
	struct vma_info *vma;
	size_t i, k = 0, matched = 0;

	/* Both lists are sorted by address and do not overlap. */
	for (i = 0; i < list->nr; i++) {
		vma = &list->v[i];
		vma->mod = false;
		while (k < nr && kv[k].end <= vma->start)
			k++;
		if (k < nr && kv[k].start == vma->start &&
		    kv[k].end == vma->end) {
			vma->mod = true;
			vma->mod_flags = kv[k].flags;
			vma->vm_flags = kv[k].vm_flags;
			vma->pgoff = kv[k].pgoff;
			vma->pgoff_known = true;
			matched++;
		}
	}
	list->have_mod = true;
	list->anon_pgoff_visible = true;
	list->nr_mod_unmatched = list->nr - matched;
	return matched;
}

static bool is_special(const char *flags)
{
	return vmflags_has(flags, "io") || vmflags_has(flags, "pf") ||
	       vmflags_has(flags, "mm") || vmflags_has(flags, "de");
}

/*
 * With the module's flags for both: exact.  The prev-relative flags of b
 * describe a only if the module saw them adjacent (it did unless the
 * layout changed between two VMAMERGE_IOC_VMAS calls).
 */
static bool classify_mod(const struct vma_info *a, const struct vma_info *b,
			 unsigned long long len_pages, struct vma_pair *p)
{
	bool pgoff_differs, av_differs;

	if (!a->mod || !b->mod || !(b->mod_flags & VMAMERGE_VMA_ADJACENT_PREV))
		return false;
	pgoff_differs = b->pgoff != a->pgoff + len_pages;
	av_differs = (a->mod_flags & VMAMERGE_VMA_ANON) &&
		     (b->mod_flags & VMAMERGE_VMA_ANON) &&
		     !(b->mod_flags & VMAMERGE_VMA_SAME_AV_PREV);
	p->exact = true;
	p->different_root = av_differs &&
			    !(b->mod_flags & VMAMERGE_VMA_SAME_ROOT_PREV);
	if (pgoff_differs && av_differs)
		p->reason = PAIR_BOTH;
	else if (pgoff_differs)
		p->reason = PAIR_PGOFF;
	else if (av_differs)
		p->reason = PAIR_ANON_VMA;
	else
		p->reason = PAIR_UNEXPLAINED;
	return true;
}

/* Returns false if a and b are not an adjacent anonymous pair at all. */
static bool classify(const struct vma_list *list, const struct vma_info *a,
		     const struct vma_info *b, struct vma_pair *p)
{
	enum pair_reason *reason = &p->reason;
	unsigned long long len_pages;

	if (!a->anon || !b->anon || a->end != b->start ||
	    memcmp(a->perms, b->perms, 4) ||
	    !anon_names_compatible(a->name, b->name))
		return false;
	if (a->vmflags && b->vmflags) {
		if (!vmflags_equal(a->vmflags, b->vmflags)) {
			*reason = PAIR_FLAGS;
			return true;
		}
		if (is_special(a->vmflags)) {
			*reason = PAIR_SPECIAL;
			return true;
		}
	}
	if (a->policy && b->policy && strcmp(a->policy, b->policy)) {
		*reason = PAIR_POLICY;
		return true;
	}
	len_pages = (a->end - a->start) >> list->page_shift;
	p->want_pgoff = a->pgoff + len_pages;
	if (classify_mod(a, b, len_pages, p))
		return true;
	p->changed = list->have_mod;
	if (!a->pgoff_known || !b->pgoff_known) {
		*reason = PAIR_UNKNOWN;
		return true;
	}
	*reason = b->pgoff != a->pgoff + len_pages ? PAIR_PGOFF : PAIR_ANON_VMA;
	return true;
}

size_t maps_analyze(const struct vma_list *list, struct vma_pair **pairs,
		    struct maps_summary *sum)
{
	struct vma_pair *out = NULL, *tmp, pair;
	size_t i, n = 0, cap = 0;

	memset(sum, 0, sizeof(*sum));
	sum->nr_vmas = list->nr;
	sum->have_mod = list->have_mod;
	for (i = 0; i + 1 < list->nr; i++) {
		memset(&pair, 0, sizeof(pair));
		pair.a = i;
		pair.b = i + 1;
		if (!classify(list, &list->v[i], &list->v[i + 1], &pair))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(out, cap * sizeof(*out));
			if (!tmp) {
				free(out);
				*pairs = NULL;
				return (size_t)-1;
			}
			out = tmp;
		}
		out[n++] = pair;
		sum->by_reason[pair.reason]++;
	}
	sum->nr_pairs = n;
	*pairs = out;
	return n;
}

const char *pair_reason_name(enum pair_reason r)
{
	static const char *const names[PAIR_NR_REASONS] = {
		[PAIR_PGOFF]	= "pgoff",
		[PAIR_ANON_VMA]	= "anon_vma",
		[PAIR_UNKNOWN]	= "pgoff_or_anon_vma",
		[PAIR_FLAGS]	= "flags",
		[PAIR_POLICY]	= "policy",
		[PAIR_SPECIAL]	= "special",
		[PAIR_BOTH]	= "pgoff_and_anon_vma",
		[PAIR_UNEXPLAINED] = "unknown",
	};

	return (unsigned int)r < PAIR_NR_REASONS ? names[r] : "?";
}

const char *pair_reason_text(enum pair_reason r)
{
	static const char *const text[PAIR_NR_REASONS] = {
		[PAIR_PGOFF]	= "pgoff",
		[PAIR_ANON_VMA]	= "anon_vma (or flags not visible in maps)",
		[PAIR_UNKNOWN]	= "pgoff or anon_vma",
		[PAIR_FLAGS]	= "flags (VmFlags differ; not a candidate)",
		[PAIR_POLICY]	= "policy (NUMA policy differs; not a candidate)",
		[PAIR_SPECIAL]	= "special (VM_IO/PFNMAP/MIXEDMAP/DONTEXPAND; not a candidate)",
		[PAIR_BOTH]	= "pgoff and anon_vma",
		[PAIR_UNEXPLAINED] = "unknown (pgoff linear, anon_vma shared or absent: should not happen, please report)",
	};

	return (unsigned int)r < PAIR_NR_REASONS ? text[r] : "?";
}

bool pair_reason_is_candidate(enum pair_reason r)
{
	return r == PAIR_PGOFF || r == PAIR_ANON_VMA || r == PAIR_UNKNOWN ||
	       r == PAIR_BOTH;
}

size_t maps_missed_merges(const struct maps_summary *sum)
{
	size_t n = 0;
	unsigned int r;

	for (r = 0; r < PAIR_NR_REASONS; r++)
		if (pair_reason_is_candidate(r))
			n += sum->by_reason[r];
	return n;
}

/*
 * The reason of p in words; with_pgoff adds the pgoff b would need, which
 * only a single pair has (each pair of a run needs another one).
 */
static void format_reason(char *buf, size_t len, const struct vma_pair *p,
			  bool with_pgoff)
{
	const char *root = p->different_root ? " (different root)" : "";

	if (!p->exact) {
		snprintf(buf, len, "%s", p->changed && p->reason == PAIR_UNKNOWN ?
			 "pgoff or anon_vma (the VMAs changed while being read)" :
			 pair_reason_text(p->reason));
		return;
	}
	switch (p->reason) {
	case PAIR_PGOFF:
		if (with_pgoff)
			snprintf(buf, len, "pgoff (linear would be 0x%llx)",
				 p->want_pgoff);
		else
			snprintf(buf, len, "pgoff");
		break;
	case PAIR_ANON_VMA:
		snprintf(buf, len, "anon_vma%s", root);
		break;
	case PAIR_BOTH:
		if (with_pgoff)
			snprintf(buf, len, "pgoff and anon_vma%s (linear pgoff would be 0x%llx)",
				 root, p->want_pgoff);
		else
			snprintf(buf, len, "pgoff and anon_vma%s", root);
		break;
	default:
		snprintf(buf, len, "%s", pair_reason_text(p->reason));
	}
}

void maps_format_pair(char *buf, size_t len, const struct vma_pair *p)
{
	format_reason(buf, len, p, true);
}

/* p and q say the same thing in words (format_reason() without pgoff) */
static bool same_kind(const struct vma_pair *p, const struct vma_pair *q)
{
	return p->reason == q->reason && p->exact == q->exact &&
	       p->different_root == q->different_root &&
	       p->changed == q->changed;
}

size_t maps_run_end(const struct vma_pair *pairs, size_t nr, size_t i)
{
	size_t j = i + 1;

	while (j < nr && pairs[j].a == pairs[j - 1].b &&
	       same_kind(&pairs[j], &pairs[i]))
		j++;
	return j;
}

void maps_format_run(char *buf, size_t len, const struct vma_pair *pairs,
		     size_t nr)
{
	format_reason(buf, len, pairs, nr == 1);
}

void maps_format_pgoff(char *buf, size_t len, const struct vma_info *v)
{
	if (v->pgoff_known)
		snprintf(buf, len, "0x%llx", v->pgoff);
	else
		snprintf(buf, len, "-");
}

void maps_print_missed(FILE *f, const struct maps_summary *sum)
{
	size_t missed = maps_missed_merges(sum);

	/* pairs chain VMAs: each merge leaves one VMA fewer */
	fprintf(f, "missed merges: %zu (vmamerge compact would leave %zu vmas at best)\n",
		missed, sum->nr_vmas - missed);
}

void maps_print_summary(FILE *f, const struct maps_summary *sum,
			bool anon_pgoff_visible)
{
	if (sum->have_mod) {
		fprintf(f, "%zu vmas, %zu adjacent anonymous pairs: %zu differ in pgoff, %zu differ only in anon_vma, %zu differ in both",
			sum->nr_vmas, sum->nr_pairs, sum->by_reason[PAIR_PGOFF],
			sum->by_reason[PAIR_ANON_VMA], sum->by_reason[PAIR_BOTH]);
		if (sum->by_reason[PAIR_UNKNOWN])
			fprintf(f, ", %zu differ in pgoff or anon_vma (changed while being read)",
				sum->by_reason[PAIR_UNKNOWN]);
		if (sum->by_reason[PAIR_UNEXPLAINED])
			fprintf(f, ", %zu unexplained (unknown)",
				sum->by_reason[PAIR_UNEXPLAINED]);
	} else {
		fprintf(f, "%zu vmas, %zu adjacent anonymous pairs: %zu differ in pgoff, %zu differ only in anon_vma (probably)",
			sum->nr_vmas, sum->nr_pairs, sum->by_reason[PAIR_PGOFF],
			sum->by_reason[PAIR_ANON_VMA]);
		if (sum->by_reason[PAIR_UNKNOWN] || !anon_pgoff_visible)
			fprintf(f, ", %zu differ in pgoff or anon_vma (anonymous pgoff not visible in /proc)",
				sum->by_reason[PAIR_UNKNOWN]);
	}
	if (sum->by_reason[PAIR_FLAGS])
		fprintf(f, ", %zu differ in flags", sum->by_reason[PAIR_FLAGS]);
	if (sum->by_reason[PAIR_POLICY])
		fprintf(f, ", %zu differ in NUMA policy",
			sum->by_reason[PAIR_POLICY]);
	if (sum->by_reason[PAIR_SPECIAL])
		fprintf(f, ", %zu are special mappings",
			sum->by_reason[PAIR_SPECIAL]);
	fputc('\n', f);
}
