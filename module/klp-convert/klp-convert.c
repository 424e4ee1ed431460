// SPDX-License-Identifier: GPL-2.0-only
/*
 * klp-convert - turn references to non-exported vmlinux symbols in a
 * livepatch module into livepatch relocations.
 *
 * Why: vmamerge calls a handful of kernel functions that are not exported.
 * Taking their address at run time (kallsyms_lookup_name() and friends) and
 * calling through a pointer does not work on kernels built with IBT: objtool
 * seals (removes the ENDBR of) every function whose address is never taken
 * inside vmlinux, so an indirect call to such a function raises #CP.  A
 * direct call needs no ENDBR.  The livepatch core can patch direct calls to
 * non-exported symbols into a module at load time; the module only has to
 * carry its relocations in the format described in the kernel's
 * Documentation/livepatch/module-elf-format.rst.
 *
 * What: the C code declares the functions normally and marks them
 * "#pragma weak" so modpost accepts the undefined references.  After the
 * .ko is linked this tool, for every undefined symbol named in SYMLIST:
 *
 *  - renames it to ".klp.sym.vmlinux.NAME,POS", sets st_shndx to
 *    SHN_LIVEPATCH and its binding to STB_GLOBAL, so that
 *    simplify_symbols() leaves it alone;
 *  - moves every relocation that uses it out of ".rela.X" into a new
 *    section ".klp.rela.vmlinux.X" (X without its leading dot, e.g.
 *    ".klp.rela.vmlinux.text"; SHT_RELA, same sh_link/sh_info, flags
 *    SHF_RELA_LIVEPATCH | SHF_INFO_LINK | SHF_ALLOC).  On 6.1 and
 *    6.12 apply_relocations() hands such sections to
 *    klp_apply_section_relocs(), which looks the symbol up in kallsyms and
 *    then runs the ordinary apply_relocate_add() on it, at module load,
 *    before any module code runs.
 *
 * Any weak undefined symbol left over is an error: the loader would
 * silently resolve it to address 0.
 *
 * The file is modified without moving existing data: the new .strtab, the
 * new relocation sections, a new .shstrtab and the new section header table
 * are appended at the end and the ELF header is pointed at them.  The
 * result is written to a temporary file which then replaces MODULE.ko.
 *
 * Only x86_64 little-endian ET_REL objects are supported.  Run it after
 * any strip and before signing: binutils strip treats SHF_ALLOC relocation
 * sections as opaque and leaves stale symbol indices in them (--check
 * detects that).
 *
 * checkpatch: this is userspace code and follows kernel coding style.  The
 * only warnings left are "Prefer __printf"/"Prefer __noreturn" on the two
 * lines that define those macros, which userspace has to do itself.
 */

#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SHN_LIVEPATCH
#define SHN_LIVEPATCH		0xff20
#endif
#ifndef SHF_RELA_LIVEPATCH
#define SHF_RELA_LIVEPATCH	0x00100000
#endif

#define KLP_SYM_PREFIX		".klp.sym."
#define KLP_RELA_PREFIX		".klp.rela."
#define KLP_OBJNAME		"vmlinux"
#define KSYM_NAME_LEN		512	/* same on 6.1 and 6.12 */
#define MODSIG_MAGIC		"~Module signature appended~\n"
#define LIVEPATCH_MODINFO	"livepatch=Y"

/* As in tools/include/linux/compiler.h */
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif
#ifndef __noreturn
#define __noreturn	__attribute__((noreturn))
#endif

static bool verbose;

static void fatal(const char *fmt, ...) __printf(1, 2) __noreturn;

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("klp-convert: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void info(const char *fmt, ...) __printf(1, 2);

static void info(const char *fmt, ...)
{
	va_list ap;

	fputs("klp-convert: note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		fatal("out of memory");
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fatal("out of memory");
	return p;
}

/* A growable byte buffer. */
struct buf {
	unsigned char *data;
	size_t len;
	size_t cap;
};

static void buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra;

	if (need < b->len)
		fatal("out of memory");
	if (need <= b->cap)
		return;
	if (!b->cap)
		b->cap = 4096;
	while (b->cap < need) {
		if (b->cap > SIZE_MAX / 2)
			fatal("out of memory");
		b->cap *= 2;
	}
	b->data = realloc(b->data, b->cap);
	if (!b->data)
		fatal("out of memory");
}

/* Append @len bytes and return the offset they were placed at. */
static size_t buf_add(struct buf *b, const void *p, size_t len)
{
	size_t off = b->len;

	buf_reserve(b, len);
	if (len)
		memcpy(b->data + off, p, len);
	b->len += len;
	return off;
}

static size_t buf_add_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s) + 1);
}

/* Pad with zero bytes up to a multiple of @align (a power of two). */
static void buf_align(struct buf *b, size_t align)
{
	static const unsigned char zero[16];
	size_t pad = (align - (b->len & (align - 1))) & (align - 1);

	buf_add(b, zero, pad);
}

/* ---- symbol list ---- */

struct sym_entry {
	char *name;
	unsigned long pos;
	unsigned int line;
	unsigned int uses;	/* undefined symbols converted now */
	bool seen;		/* found already converted */
};

struct symlist {
	struct sym_entry *v;
	size_t n;
};

static int sym_entry_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static struct sym_entry *symlist_find(struct symlist *l, const char *name)
{
	struct sym_entry key = { .name = (char *)name };

	if (!l->n)
		return NULL;
	return bsearch(&key, l->v, l->n, sizeof(*l->v), sym_entry_cmp);
}

/* Kernel symbol names as they may appear in a .klp.sym name. */
static bool valid_sym_name(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= KSYM_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c <= ' ' || c >= 0x7f || c == ',' || c == '#')
			return false;
	}
	return true;
}

/* Parse an unsigned decimal number spanning all of @s. */
static bool parse_ulong(const char *s, unsigned long *val)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*val = strtoul(s, &end, 10);
	return !errno && !*end;
}

/*
 * Split @line into at most @max whitespace separated fields, cutting off
 * a '#' comment.  Returns the number of fields found (max + 1 if there
 * were more).
 */
static int split_fields(char *line, char **field, int max)
{
	char *hash = strchr(line, '#');
	int n = 0;

	if (hash)
		*hash = '\0';
	for (;;) {
		line += strspn(line, " \t\r\n");
		if (!*line)
			return n;
		if (n == max)
			return max + 1;
		field[n++] = line;
		line += strcspn(line, " \t\r\n");
		if (*line)
			*line++ = '\0';
	}
}

static void symlist_add(struct symlist *l, size_t *cap, const char *file,
			unsigned int lineno, char **f)
{
	struct sym_entry *e;

	if (!valid_sym_name(f[1], strlen(f[1])))
		fatal("%s:%u: invalid symbol name '%s'", file, lineno, f[1]);
	if (l->n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		l->v = realloc(l->v, *cap * sizeof(*l->v));
		if (!l->v)
			fatal("out of memory");
	}
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->name = strdup(f[1]);
	if (!e->name)
		fatal("out of memory");
	e->line = lineno;
	if (!parse_ulong(f[2], &e->pos))
		fatal("%s:%u: invalid sympos '%s'", file, lineno, f[2]);
}

static void symlist_free(struct symlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
}

/* Read SYMLIST, keeping the entries for @series (or "*"). */
static void symlist_load(struct symlist *l, const char *file,
			 const char *series)
{
	FILE *fp = fopen(file, "r");
	char line[1024];
	unsigned int lineno = 0;
	size_t i, cap = 0;
	char *f[3];
	int n;

	if (!fp)
		fatal("%s: %s", file, strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(fp))
			fatal("%s:%u: line too long", file, lineno);
		n = split_fields(line, f, 3);
		if (!n)
			continue;
		if (n != 3)
			fatal("%s:%u: expected 'series symbol sympos'",
			      file, lineno);
		if (strcmp(f[0], "*") && (!series || strcmp(f[0], series)))
			continue;
		symlist_add(l, &cap, file, lineno, f);
	}
	if (ferror(fp))
		fatal("%s: read error", file);
	fclose(fp);

	qsort(l->v, l->n, sizeof(*l->v), sym_entry_cmp);
	for (i = 1; i < l->n; i++)
		if (!strcmp(l->v[i - 1].name, l->v[i].name))
			fatal("%s:%u: duplicate entry for %s (line %u)", file,
			      l->v[i].line, l->v[i].name, l->v[i - 1].line);
}

/* ---- ELF access ---- */

/* A validated view of an ELF image; all pointers point into @img. */
struct elf {
	const char *path;
	unsigned char *img;
	size_t size;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	unsigned int shnum;
	const char *shstr;
	size_t shstr_size;
	unsigned int symidx;
	Elf64_Sym *syms;
	size_t nsyms;
	const char *str;
	size_t str_size;
};

static bool range_ok(const struct elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

static const char *sec_name(const struct elf *e, unsigned int idx)
{
	return e->shstr + e->sh[idx].sh_name;
}

static const char *sym_name(const struct elf *e, const Elf64_Sym *s)
{
	return e->str + s->st_name;
}

static void *sec_data(const struct elf *e, unsigned int idx)
{
	return e->img + e->sh[idx].sh_offset;
}

static void elf_check_header(struct elf *e)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)e->img;

	if (e->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		fatal("%s: not an ELF file", e->path);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		fatal("%s: not an x86_64 ELF64 little-endian file", e->path);
	if (eh->e_type != ET_REL)
		fatal("%s: not a relocatable object (ET_REL)", e->path);
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		fatal("%s: unexpected e_shentsize %u", e->path,
		      eh->e_shentsize);
	if (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX)
		fatal("%s: extended section numbering is not supported",
		      e->path);
	if (eh->e_shoff % 8 ||
	    !range_ok(e, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*e->sh)))
		fatal("%s: bad section header table", e->path);
	if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
		fatal("%s: bad e_shstrndx", e->path);
	e->eh = eh;
	e->sh = (Elf64_Shdr *)(e->img + eh->e_shoff);
	e->shnum = eh->e_shnum;
}

/* A string table must be non-empty and end in a NUL byte. */
static const char *elf_strtab(const struct elf *e, unsigned int idx,
			      size_t *size)
{
	const Elf64_Shdr *s = &e->sh[idx];
	const char *p = (const char *)e->img + s->sh_offset;

	if (s->sh_type != SHT_STRTAB || !s->sh_size || p[s->sh_size - 1])
		fatal("%s: section %u is not a valid string table", e->path,
		      idx);
	*size = s->sh_size;
	return p;
}

static void elf_check_sections(struct elf *e)
{
	unsigned int i;

	for (i = 1; i < e->shnum; i++) {
		Elf64_Shdr *s = &e->sh[i];

		if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL &&
		    !range_ok(e, s->sh_offset, s->sh_size))
			fatal("%s: section %u extends past end of file",
			      e->path, i);
		if (s->sh_type == SHT_SYMTAB_SHNDX)
			fatal("%s: extended symbol section indices are not supported",
			      e->path);
	}
	if (e->sh[0].sh_type != SHT_NULL)
		fatal("%s: section 0 is not SHT_NULL", e->path);
	e->shstr = elf_strtab(e, e->eh->e_shstrndx, &e->shstr_size);
	for (i = 1; i < e->shnum; i++)
		if (e->sh[i].sh_name >= e->shstr_size)
			fatal("%s: section %u has a bad name offset", e->path,
			      i);
}

static void elf_find_symtab(struct elf *e)
{
	Elf64_Shdr *s = NULL;
	unsigned int i;

	for (i = 1; i < e->shnum; i++) {
		if (e->sh[i].sh_type != SHT_SYMTAB)
			continue;
		if (s)
			fatal("%s: more than one symbol table", e->path);
		s = &e->sh[i];
		e->symidx = i;
	}
	if (!s)
		fatal("%s: no symbol table (stripped?)", e->path);
	if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_size % sizeof(Elf64_Sym) ||
	    s->sh_offset % 8)
		fatal("%s: malformed symbol table", e->path);
	if (!s->sh_link || s->sh_link >= e->shnum)
		fatal("%s: symbol table has a bad sh_link", e->path);
	e->syms = (Elf64_Sym *)(e->img + s->sh_offset);
	e->nsyms = s->sh_size / sizeof(Elf64_Sym);
	e->str = elf_strtab(e, s->sh_link, &e->str_size);
	for (i = 0; i < e->nsyms; i++)
		if (e->syms[i].st_name >= e->str_size)
			fatal("%s: symbol %u has a bad name offset", e->path,
			      i);
}

/* Parse and validate @img; the view stays valid while @img does. */
static void elf_open(struct elf *e, const char *path, unsigned char *img,
		     size_t size)
{
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->img = img;
	e->size = size;
	elf_check_header(e);
	elf_check_sections(e);
	elf_find_symtab(e);
}

/*
 * A relocation section this tool deals with: SHT_RELA or SHT_REL, using
 * the symbol table, applying to a real section.
 */
static bool is_reloc_sec(const struct elf *e, unsigned int i)
{
	const Elf64_Shdr *s = &e->sh[i];

	if (s->sh_type != SHT_RELA && s->sh_type != SHT_REL)
		return false;
	if (s->sh_link != e->symidx)
		fatal("%s: relocation section %s does not use .symtab",
		      e->path, sec_name(e, i));
	if (!s->sh_info || s->sh_info >= e->shnum)
		fatal("%s: relocation section %s has a bad target",
		      e->path, sec_name(e, i));
	if (s->sh_type == SHT_REL)
		return true;
	if (s->sh_entsize != sizeof(Elf64_Rela) ||
	    s->sh_size % sizeof(Elf64_Rela) || s->sh_offset % 8)
		fatal("%s: malformed relocation section %s", e->path,
		      sec_name(e, i));
	return true;
}

static const Elf64_Sym *rela_sym(const struct elf *e, unsigned int sec,
				 const Elf64_Rela *r)
{
	uint64_t idx = ELF64_R_SYM(r->r_info);

	if (idx >= e->nsyms)
		fatal("%s: relocation in %s uses bad symbol index %llu",
		      e->path, sec_name(e, sec), (unsigned long long)idx);
	return &e->syms[idx];
}

/* Does the .modinfo section contain "livepatch=Y"? */
static bool has_livepatch_modinfo(const struct elf *e)
{
	unsigned int i;
	size_t off, len;
	const char *p;

	for (i = 1; i < e->shnum; i++) {
		if (strcmp(sec_name(e, i), ".modinfo") ||
		    e->sh[i].sh_type == SHT_NOBITS)
			continue;
		p = sec_data(e, i);
		for (off = 0; off < e->sh[i].sh_size; off += len + 1) {
			len = strnlen(p + off, e->sh[i].sh_size - off);
			if (!strcmp(p + off, LIVEPATCH_MODINFO) &&
			    off + len < e->sh[i].sh_size)
				return true;
		}
	}
	return false;
}

/*
 * Split a livepatch symbol name ".klp.sym.OBJ.NAME,POS" the way the
 * kernel's klp_resolve_symbols() does.  On success *name points at NAME
 * and *len is its length.
 */
static bool parse_klp_sym(const char *s, const char **name, size_t *len,
			  unsigned long *pos)
{
	size_t plen = strlen(KLP_SYM_PREFIX KLP_OBJNAME ".");
	const char *comma;

	if (strncmp(s, KLP_SYM_PREFIX KLP_OBJNAME ".", plen))
		return false;
	s += plen;
	comma = strchr(s, ',');
	if (!comma || !valid_sym_name(s, comma - s))
		return false;
	*name = s;
	*len = comma - s;
	return parse_ulong(comma + 1, pos);
}

/* ---- verification ---- */

struct summary {
	unsigned int nsyms;
	unsigned int nrelas;
	unsigned int nsecs;
};

static void verify_symbols(const struct elf *e, struct summary *sum,
			   bool have_list)
{
	const char *name, *base;
	unsigned long pos;
	size_t i, len;

	for (i = 1; i < e->nsyms; i++) {
		const Elf64_Sym *s = &e->syms[i];

		name = sym_name(e, s);
		if (s->st_shndx == SHN_UNDEF && *name &&
		    ELF64_ST_BIND(s->st_info) == STB_WEAK)
			fatal(have_list ?
			      "%s: weak undefined symbol %s is not in the symbol list" :
			      "%s: weak undefined symbol %s was not converted",
			      e->path, name);
		if (s->st_shndx != SHN_LIVEPATCH)
			continue;
		if (!parse_klp_sym(name, &base, &len, &pos))
			fatal("%s: livepatch symbol '%s' is not of the form "
			      KLP_SYM_PREFIX KLP_OBJNAME ".NAME,POS",
			      e->path, name);
		sum->nsyms++;
	}
}

static void verify_klp_rela(const struct elf *e, unsigned int i,
			    struct summary *sum)
{
	const Elf64_Shdr *s = &e->sh[i];
	const char *name = sec_name(e, i);
	const Elf64_Rela *r = sec_data(e, i);
	size_t k, n = s->sh_size / sizeof(*r);

	if (s->sh_type != SHT_RELA)
		fatal("%s: livepatch relocation section %s is not SHT_RELA",
		      e->path, name);
	if (strncmp(name, KLP_RELA_PREFIX KLP_OBJNAME ".",
		    strlen(KLP_RELA_PREFIX KLP_OBJNAME ".")))
		fatal("%s: livepatch relocation section %s is not named "
		      KLP_RELA_PREFIX KLP_OBJNAME ".*", e->path, name);
	for (k = 0; k < n; k++) {
		const Elf64_Sym *sym = rela_sym(e, i, &r[k]);

		if (sym->st_shndx != SHN_LIVEPATCH)
			fatal("%s: %s references non-livepatch symbol '%s'",
			      e->path, name, sym_name(e, sym));
	}
	sum->nrelas += n;
	sum->nsecs++;
}

/*
 * Ordinary relocation sections for loaded sections must not use livepatch
 * symbols: the module loader would apply them with st_value 0 (or with
 * whatever a klp section resolved before, depending on section order).
 */
static void verify_plain_rela(const struct elf *e, unsigned int i)
{
	const Elf64_Shdr *s = &e->sh[i];
	const Elf64_Rela *r = sec_data(e, i);
	size_t k, n = s->sh_size / sizeof(*r);

	if (!(e->sh[s->sh_info].sh_flags & SHF_ALLOC))
		return;
	if (s->sh_type == SHT_REL)
		fatal("%s: SHT_REL section %s is not supported on x86_64",
		      e->path, sec_name(e, i));
	for (k = 0; k < n; k++) {
		const Elf64_Sym *sym = rela_sym(e, i, &r[k]);

		if (sym->st_shndx == SHN_LIVEPATCH)
			fatal("%s: %s references livepatch symbol '%s'",
			      e->path, sec_name(e, i), sym_name(e, sym));
	}
}

static void verify(const struct elf *e, struct summary *sum, bool have_list)
{
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	if (!has_livepatch_modinfo(e))
		fatal("%s: no '" LIVEPATCH_MODINFO "' in .modinfo; not a livepatch module (MODULE_INFO(livepatch, \"Y\"))",
		      e->path);
	verify_symbols(e, sum, have_list);
	for (i = 1; i < e->shnum; i++) {
		const char *name = sec_name(e, i);
		bool klp = e->sh[i].sh_flags & SHF_RELA_LIVEPATCH;

		if (!klp && !strncmp(name, KLP_RELA_PREFIX,
				     strlen(KLP_RELA_PREFIX)))
			fatal("%s: %s lacks SHF_RELA_LIVEPATCH", e->path,
			      name);
		if (!is_reloc_sec(e, i))
			continue;
		if (klp)
			verify_klp_rela(e, i, sum);
		else
			verify_plain_rela(e, i);
	}
}

/* ---- conversion ---- */

/* One .klp.rela.vmlinux.X section being built. */
struct klp_sec {
	unsigned int shidx;	/* index in the new section header table */
	struct buf data;
};

struct conv {
	struct elf *e;		/* the input, never modified */
	struct buf *out;	/* the output image, starts as a copy */
	Elf64_Shdr *sh;		/* new section header table */
	unsigned int shnum;
	struct buf shstr;	/* new .shstrtab */
	struct buf str;		/* new .strtab */
	bool *converted;	/* per symbol index */
	struct klp_sec *klp;	/* per target section index */
	unsigned int nconv;
	unsigned int nmoved;
};

/* Rename and re-mark the listed undefined symbols. */
static void convert_symbols(struct conv *c, struct symlist *l)
{
	struct elf *e = c->e;
	Elf64_Sym *osyms = (Elf64_Sym *)(c->out->data +
					 e->sh[e->symidx].sh_offset);
	char name[sizeof(KLP_SYM_PREFIX KLP_OBJNAME) + KSYM_NAME_LEN + 32];
	struct sym_entry *ent;
	const char *base;
	unsigned long pos;
	size_t i, len;

	for (i = 1; i < e->nsyms; i++) {
		const Elf64_Sym *s = &e->syms[i];

		if (s->st_shndx == SHN_LIVEPATCH &&
		    parse_klp_sym(sym_name(e, s), &base, &len, &pos)) {
			snprintf(name, sizeof(name), "%.*s", (int)len, base);
			ent = symlist_find(l, name);
			if (ent && ent->pos != pos)
				fatal("%s: %s is already converted with sympos %lu, symbol list says %lu",
				      e->path, name, pos, ent->pos);
			if (ent)
				ent->seen = true;
			continue;
		}
		if (s->st_shndx != SHN_UNDEF)
			continue;
		ent = symlist_find(l, sym_name(e, s));
		if (!ent)
			continue;
		snprintf(name, sizeof(name), KLP_SYM_PREFIX KLP_OBJNAME ".%s,%lu",
			 ent->name, ent->pos);
		osyms[i].st_name = buf_add_str(&c->str, name);
		osyms[i].st_shndx = SHN_LIVEPATCH;
		osyms[i].st_info = ELF64_ST_INFO(STB_GLOBAL,
						 ELF64_ST_TYPE(s->st_info));
		osyms[i].st_value = 0;
		c->converted[i] = true;
		ent->uses++;
		c->nconv++;
		if (verbose)
			info("%s -> %s", ent->name, name);
	}
}

/* Number of bytes an x86_64 relocation writes, -1 if unsupported. */
static int reloc_size(unsigned int type)
{
	switch (type) {
	case R_X86_64_NONE:
		return 0;
	case R_X86_64_64:
	case R_X86_64_PC64:
		return 8;
	case R_X86_64_32:
	case R_X86_64_32S:
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
		return 4;
	default:
		return -1;
	}
}

/*
 * Check that the kernel's apply_relocate_add() can apply @r to its target
 * section: a supported type, in bounds, and the location still zero (the
 * x86 loader refuses to overwrite a non-zero location).
 */
static void check_reloc_target(const struct elf *e, unsigned int relsec,
			       const Elf64_Rela *r, const char *symname)
{
	unsigned int target = e->sh[relsec].sh_info;
	const Elf64_Shdr *t = &e->sh[target];
	unsigned int type = ELF64_R_TYPE(r->r_info);
	int size = reloc_size(type);
	const unsigned char *loc;
	int k;

	if (!(t->sh_flags & SHF_ALLOC))
		return;		/* never applied by the module loader */
	if (size < 0)
		fatal("%s: unsupported relocation type %u against %s in %s",
		      e->path, type, symname, sec_name(e, relsec));
	if (t->sh_type == SHT_NOBITS || r->r_offset > t->sh_size ||
	    (uint64_t)size > t->sh_size - r->r_offset)
		fatal("%s: relocation against %s at %s+0x%llx is out of bounds",
		      e->path, symname, sec_name(e, target),
		      (unsigned long long)r->r_offset);
	loc = (const unsigned char *)sec_data(e, target) + r->r_offset;
	for (k = 0; k < size; k++)
		if (loc[k])
			fatal("%s: relocation target %s+0x%llx for %s is not zero",
			      e->path, sec_name(e, target),
			      (unsigned long long)r->r_offset, symname);
}

static Elf64_Shdr *new_section(struct conv *c, const char *name)
{
	Elf64_Shdr *s = &c->sh[c->shnum++];

	if (c->shnum >= SHN_LORESERVE)
		fatal("%s: too many sections", c->e->path);
	memset(s, 0, sizeof(*s));
	s->sh_name = buf_add_str(&c->shstr, name);
	return s;
}

/*
 * The livepatch relocation section for @target: an existing one (from an
 * earlier run with a shorter list) is extended, otherwise a new one is
 * created.
 */
static struct klp_sec *klp_sec_for(struct conv *c, unsigned int target)
{
	struct klp_sec *k = &c->klp[target];
	struct elf *e = c->e;
	const char *tname = sec_name(e, target);
	unsigned int i;
	Elf64_Shdr *s;
	char *name;
	size_t len;

	if (k->shidx)
		return k;
	for (i = 1; i < e->shnum; i++) {
		s = &e->sh[i];
		if ((s->sh_flags & SHF_RELA_LIVEPATCH) &&
		    s->sh_type == SHT_RELA && s->sh_info == target) {
			k->shidx = i;
			buf_add(&k->data, sec_data(e, i), s->sh_size);
			return k;
		}
	}

	/* ".klp.rela.vmlinux." + target name without its leading dot */
	len = strlen(KLP_RELA_PREFIX KLP_OBJNAME ".") + strlen(tname) + 1;
	name = xmalloc(len);
	snprintf(name, len, KLP_RELA_PREFIX KLP_OBJNAME ".%s",
		 tname + (tname[0] == '.'));
	k->shidx = c->shnum;
	s = new_section(c, name);
	free(name);
	s->sh_type = SHT_RELA;
	/*
	 * SHF_ALLOC as module-elf-format.rst requires; for a target that is
	 * not loaded the relocations are never applied, so do not waste
	 * module memory on them.
	 */
	s->sh_flags = SHF_RELA_LIVEPATCH | SHF_INFO_LINK |
		      (e->sh[target].sh_flags & SHF_ALLOC);
	s->sh_link = e->symidx;
	s->sh_info = target;
	s->sh_addralign = 8;
	s->sh_entsize = sizeof(Elf64_Rela);
	if (verbose && !(e->sh[target].sh_flags & SHF_ALLOC))
		info("%s is not loaded; its relocations are kept in %s only for completeness",
		     tname, sec_name(e, target));
	return k;
}

/*
 * Move the relocations of @relsec that use converted symbols into the
 * livepatch section for the same target, compacting the rest in place.
 */
static void convert_relocs(struct conv *c, unsigned int relsec)
{
	struct elf *e = c->e;
	const Elf64_Shdr *s = &e->sh[relsec];
	const Elf64_Rela *r = sec_data(e, relsec);
	Elf64_Rela *keep = (Elf64_Rela *)(c->out->data + s->sh_offset);
	size_t i, nkeep = 0, n = s->sh_size / sizeof(*r);
	struct klp_sec *k;

	for (i = 0; i < n; i++) {
		const Elf64_Sym *sym = rela_sym(e, relsec, &r[i]);

		if (!c->converted[sym - e->syms]) {
			keep[nkeep++] = r[i];
			continue;
		}
		check_reloc_target(e, relsec, &r[i], sym_name(e, sym));
		k = klp_sec_for(c, s->sh_info);
		buf_add(&k->data, &r[i], sizeof(r[i]));
		c->nmoved++;
	}
	if (nkeep == n)
		return;
	/* Zero the tail so no stale entries linger in the file. */
	memset(keep + nkeep, 0, (n - nkeep) * sizeof(*keep));
	c->sh[relsec].sh_size = nkeep * sizeof(*keep);
}

static void convert_all_relocs(struct conv *c)
{
	struct elf *e = c->e;
	unsigned int i;

	for (i = 1; i < e->shnum; i++) {
		if (!is_reloc_sec(e, i) ||
		    (e->sh[i].sh_flags & SHF_RELA_LIVEPATCH))
			continue;
		if (e->sh[i].sh_type == SHT_RELA) {
			convert_relocs(c, i);
			continue;
		}
		/* SHT_REL does not occur on x86_64; refuse if it matters. */
		if (e->sh[i].sh_size)
			fatal("%s: SHT_REL section %s is not supported",
			      e->path, sec_name(e, i));
	}
}

/*
 * Append the new .strtab, relocation sections, .shstrtab and section
 * header table to the output image and point the ELF header at them.
 * Existing data never moves.
 */
static void append_tables(struct conv *c)
{
	struct elf *e = c->e;
	struct buf *out = c->out;
	unsigned int i, stridx = e->sh[e->symidx].sh_link;
	Elf64_Shdr *s;
	Elf64_Ehdr *eh;
	size_t shoff;

	s = &c->sh[stridx];
	s->sh_offset = buf_add(out, c->str.data, c->str.len);
	s->sh_size = c->str.len;
	for (i = 1; i < c->shnum; i++) {
		struct klp_sec *k = &c->klp[c->sh[i].sh_info];

		if (!(c->sh[i].sh_flags & SHF_RELA_LIVEPATCH) ||
		    k->shidx != i)
			continue;
		buf_align(out, 8);
		c->sh[i].sh_offset = buf_add(out, k->data.data, k->data.len);
		c->sh[i].sh_size = k->data.len;
	}
	s = &c->sh[e->eh->e_shstrndx];
	s->sh_offset = buf_add(out, c->shstr.data, c->shstr.len);
	s->sh_size = c->shstr.len;
	buf_align(out, 8);
	shoff = buf_add(out, c->sh, c->shnum * sizeof(*c->sh));
	eh = (Elf64_Ehdr *)out->data;
	eh->e_shoff = shoff;
	eh->e_shnum = c->shnum;
}

/* Returns the number of symbols converted; the image is in @out. */
static unsigned int convert(struct elf *e, struct symlist *l, struct buf *out)
{
	struct conv c = { .e = e, .out = out };
	size_t i;

	/* Both tables are rewritten separately below. */
	if (e->sh[e->symidx].sh_link == e->eh->e_shstrndx)
		fatal("%s: .strtab shared with .shstrtab is not supported",
		      e->path);
	buf_add(out, e->img, e->size);
	c.sh = xcalloc(2 * (size_t)e->shnum, sizeof(*c.sh));
	memcpy(c.sh, e->sh, e->shnum * sizeof(*c.sh));
	c.shnum = e->shnum;
	buf_add(&c.shstr, e->shstr, e->shstr_size);
	buf_add(&c.str, e->str, e->str_size);
	c.converted = xcalloc(e->nsyms, sizeof(*c.converted));
	c.klp = xcalloc(e->shnum, sizeof(*c.klp));

	convert_symbols(&c, l);
	if (c.nconv) {
		convert_all_relocs(&c);
		append_tables(&c);
	}
	if (verbose)
		info("%u symbols converted, %u relocations moved",
		     c.nconv, c.nmoved);

	for (i = 0; i < e->shnum; i++)
		free(c.klp[i].data.data);
	free(c.klp);
	free(c.converted);
	free(c.str.data);
	free(c.shstr.data);
	free(c.sh);
	return c.nconv;
}

/* ---- file handling ---- */

static unsigned char *read_file(const char *path, size_t *size,
				struct stat *st)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *p;

	if (!fp)
		fatal("%s: %s", path, strerror(errno));
	if (fstat(fileno(fp), st))
		fatal("%s: %s", path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		fatal("%s: not a regular file", path);
	if ((uint64_t)st->st_size > SIZE_MAX / 2)
		fatal("%s: file too large", path);
	*size = st->st_size;
	p = xmalloc(*size);
	if (fread(p, 1, *size, fp) != *size)
		fatal("%s: short read", path);
	fclose(fp);
	return p;
}

/*
 * A signature appended by sign-file would no longer match (and would no
 * longer be at the end of the file); conversion must come first.
 */
static void check_unsigned(const char *path, const unsigned char *img,
			   size_t size)
{
	size_t len = strlen(MODSIG_MAGIC);

	if (size >= len && !memcmp(img + size - len, MODSIG_MAGIC, len))
		fatal("%s: module is already signed; run klp-convert before signing",
		      path);
}

/* Replace @path by @img atomically; the original stays on any error. */
static void write_file(const char *path, const struct buf *img, mode_t mode)
{
	size_t len = strlen(path) + sizeof(".klp-XXXXXX");
	char *tmp = xmalloc(len);
	FILE *fp;
	int fd;

	snprintf(tmp, len, "%s.klp-XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		fatal("%s: %s", tmp, strerror(errno));
	fp = fdopen(fd, "wb");
	if (!fp || fchmod(fd, mode & 07777) ||
	    fwrite(img->data, 1, img->len, fp) != img->len ||
	    fflush(fp) || fsync(fd)) {
		int err = errno;

		unlink(tmp);
		fatal("%s: write failed: %s", tmp, strerror(err));
	}
	if (fclose(fp) || rename(tmp, path)) {
		int err = errno;

		unlink(tmp);
		fatal("%s: cannot replace: %s", path, strerror(err));
	}
	free(tmp);
}

static void report_unused(const struct symlist *l)
{
	size_t i;

	if (!verbose)
		return;
	for (i = 0; i < l->n; i++)
		if (!l->v[i].uses && !l->v[i].seen)
			info("listed symbol %s is not referenced",
			     l->v[i].name);
}

static void print_summary(const struct summary *sum)
{
	printf("klp-convert: %u symbols, %u relocations in %u sections\n",
	       sum->nsyms, sum->nrelas, sum->nsecs);
}

static int do_check(const char *path)
{
	struct summary sum;
	struct stat st;
	struct elf e;
	size_t size;
	unsigned char *img = read_file(path, &size, &st);

	elf_open(&e, path, img, size);
	verify(&e, &sum, false);
	print_summary(&sum);
	free(img);
	return 0;
}

static int do_convert(const char *listfile, const char *path,
		      const char *series)
{
	struct symlist list = { 0 };
	struct buf out = { 0 };
	struct summary sum;
	struct elf e, ne;
	struct stat st;
	size_t size;
	unsigned char *img = read_file(path, &size, &st);

	check_unsigned(path, img, size);
	elf_open(&e, path, img, size);
	if (!has_livepatch_modinfo(&e))
		fatal("%s: no '" LIVEPATCH_MODINFO "' in .modinfo; not a livepatch module (MODULE_INFO(livepatch, \"Y\"))",
		      path);
	symlist_load(&list, listfile, series);
	if (!convert(&e, &list, &out)) {
		verify(&e, &sum, true);
		info("%s: nothing to convert (already converted?)", path);
	} else {
		/* Re-validate the result from scratch before writing it. */
		elf_open(&ne, path, out.data, out.len);
		verify(&ne, &sum, true);
		write_file(path, &out, st.st_mode);
	}
	report_unused(&list);
	print_summary(&sum);
	symlist_free(&list);
	free(out.data);
	free(img);
	return 0;
}

static void print_usage(FILE *fp)
{
	fputs("usage: klp-convert [-v] [--series S] SYMLIST MODULE.ko\n"
	      "       klp-convert [-v] --check MODULE.ko\n"
	      "\n"
	      "Convert references to the undefined symbols listed in SYMLIST\n"
	      "into livepatch relocations, editing MODULE.ko in place.\n"
	      "SYMLIST lines: SERIES SYMBOL SYMPOS, SERIES '*' or as --series.\n",
	      fp);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "series", required_argument, NULL, 's' },
		{ "check", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *series = NULL;
	bool check = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "s:cvh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			series = optarg;
			break;
		case 'c':
			check = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (check && argc == 1)
		return do_check(argv[0]);
	if (!check && argc == 2)
		return do_convert(argv[0], argv[1], series);
	print_usage(stderr);
	return 2;
}
