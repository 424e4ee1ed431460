// SPDX-License-Identifier: GPL-2.0
/*
 * kfp - kernel fingerprint: prove from a Debian kernel image alone that
 * the code and types a livepatch depends on are those of a validated build.
 *
 *   kfp symbols IMAGE
 *   kfp fingerprint IMAGE --functions FILE --structs FILE [--config FILE]
 *                   [-o OUT]
 *   kfp compare A B
 *   kfp disasm IMAGE NAME...       (the normalised listing behind a hash)
 *   kfp decoder-check IMAGE        (own x86 decoder against libopcodes)
 *
 * IMAGE is a bzImage (/boot/vmlinuz-*, xz or zstd payload) or an
 * uncompressed vmlinux.  Symbols come from the image's own kallsyms tables,
 * found by their structure (scripts/kallsyms.c writes them; the order of
 * the tables differs between 6.1, 6.12 and later).  Structures come from
 * the .BTF section.  Exit status: 0 success (compare: all identical),
 * 1 compare found differences, 2 bad input or usage.  The fingerprint file
 * format is described above cmd_fingerprint().
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>
#include <lz4.h>
#include <lzma.h>
#include <zstd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#ifdef KFP_OPCODES
#include <dis-asm.h>
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FP_FORMAT	2		/* the fingerprint file format */
#define FP_MAGIC	"kfp-fingerprint 2"
#define MAX_FILE	(512u << 20)	/* an image or a list file */
#define MAX_UNPACKED	(1024u << 20)	/* a decompressed vmlinux */
#define KSYM_MAX	1024		/* longest expanded symbol name */
#define HASH_HEX	32		/* 128 bits of SHA-256 */
#define DATA_HASH_MAX	(1u << 20)	/* bytes of a data symbol hashed */

/* ------------------------------------------------------------------ */
/* Errors and small helpers                                           */
/* ------------------------------------------------------------------ */

static const char *prog = "kfp";

/* Every error of input or usage ends here: a message and exit status 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void __attribute__((format(printf, 1, 2))) warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: warning: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory (%zu bytes)", n);
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fatal("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

static void *xrealloc(void *old, size_t n)
{
	void *p = realloc(old, n ? n : 1);

	if (!p)
		fatal("out of memory (%zu bytes)", n);
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		fatal("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		fatal("out of memory");
	return p;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A growable string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_grow(struct sbuf *sb, size_t more)
{
	if (sb->len + more + 1 <= sb->cap)
		return;
	sb->cap = (sb->len + more + 1) * 2;
	sb->p = xrealloc(sb->p, sb->cap);
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vsnprintf failed");
	sb_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->p + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	size_t n = strlen(s);

	sb_grow(sb, n);
	memcpy(sb->p + sb->len, s, n + 1);
	sb->len += n;
}

static void sb_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->p)
		sb->p[0] = '\0';
}

static const char *sb_str(struct sbuf *sb)
{
	if (!sb->p)
		sb_grow(sb, 0);
	sb->p[sb->len] = '\0';
	return sb->p;
}

/* ------------------------------------------------------------------ */
/* SHA-256 (FIPS 180-4), to name normalised code and layouts           */
/* ------------------------------------------------------------------ */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t total;
	size_t fill;
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof(h0));
	s->total = 0;
	s->fill = 0;
}

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
			      w[i - 15] >> 3;
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
			      w[i - 2] >> 10;

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
		     ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	s->total += n;
	while (n) {
		size_t k = 64 - s->fill;

		if (k > n)
			k = n;
		memcpy(s->buf + s->fill, p, k);
		s->fill += k;
		p += k;
		n -= k;
		if (s->fill == 64) {
			sha256_block(s, s->buf);
			s->fill = 0;
		}
	}
}

/* Finish and write the first HASH_HEX hex digits to out[HASH_HEX + 1]. */
static void sha256_hex(struct sha256 *s, char *out)
{
	uint64_t bits = s->total * 8;
	uint8_t pad = 0x80, len[8];
	int i;

	sha256_update(s, &pad, 1);
	pad = 0;
	while (s->fill != 56)
		sha256_update(s, &pad, 1);
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(s, len, 8);
	for (i = 0; i < HASH_HEX / 8; i++)
		sprintf(out + 8 * i, "%08" PRIx32, s->h[i]);
	out[HASH_HEX] = '\0';
}

static void hash_str(const char *s, size_t n, char *out)
{
	struct sha256 sh;

	sha256_init(&sh);
	sha256_update(&sh, s, n);
	sha256_hex(&sh, out);
}

/* ------------------------------------------------------------------ */
/* Reading files                                                      */
/* ------------------------------------------------------------------ */

static uint8_t *read_file(const char *path, size_t *size)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		fatal("%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		fatal("%s: cannot stat: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		fatal("%s: is a directory", path);
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > MAX_FILE)
		fatal("%s: larger than %u MiB", path, MAX_FILE >> 20);
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			cap = cap ? cap * 2 : (size_t)(S_ISREG(st.st_mode) ?
						       st.st_size + 1 : 65536);
			if (cap < len + 65536)
				cap = len + 65536;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("%s: read error: %s", path, strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > MAX_FILE)
			fatal("%s: larger than %u MiB", path, MAX_FILE >> 20);
	}
	close(fd);
	*size = len;
	return buf;
}

/* ------------------------------------------------------------------ */
/* The image: bzImage -> decompressed vmlinux ELF -> sections          */
/* ------------------------------------------------------------------ */

struct section {
	const char *name;
	uint64_t addr, size;
	const uint8_t *data;	/* NULL for SHT_NOBITS */
	uint64_t flags;
};

struct symbol {
	uint64_t addr;
	const char *name;
	char type;
};

enum site_kind {
	S_ALT, S_PARA, S_JUMP, S_SCALL, S_EX, S_RETPOLINE, S_RETURN,
	S_CALLSITE, S_SEAL, S_LOCK, S_BUG, S_FENTRY, S_NKINDS,
};

struct table {
	uint64_t start;		/* address of the first entry */
	const uint8_t *data;
	size_t count, esize;
};

struct site {
	uint64_t addr;
	uint32_t idx;
	uint8_t kind;
};

struct kallsyms {
	uint64_t num_syms, names, markers, token_table, token_index;
	uint64_t offsets, relative_base, seqs;	/* 0 when absent */
	const char *mode;
};

struct image {
	const char *path;
	uint8_t *elf_data;
	size_t elf_size;
	Elf *elf;
	struct section *secs;
	size_t nsecs;
	const struct section *rodata, *percpu;
	uint64_t lo, hi;	/* span of the sections at kernel addresses */
	struct symbol *syms;	/* kallsyms order: by address */
	size_t nsyms;
	uint32_t *by_name;	/* indices into syms, sorted by name */
	struct kallsyms ks;
	char *banner, *release, *version, *toolchain;
	char build_id[129];
	int ver_major, ver_minor;
	struct table tables[S_NKINDS];
	struct site *sites;	/* sorted by address */
	size_t nsites;
	char tables_found[256];
	double t_unpack, t_kallsyms;
};

static const char *const site_names[S_NKINDS] = {
	"alt", "para", "jump", "scall", "ex", "retpoline", "return",
	"callsite", "seal", "lock", "bug", "fentry",
};

static uint8_t *unpack_xz(const char *path, const uint8_t *in, size_t n,
			  size_t out_size)
{
	lzma_stream s = LZMA_STREAM_INIT;
	uint8_t *out = xmalloc(out_size + 1);
	lzma_ret r;

	if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK)
		fatal("%s: cannot initialise the xz decoder", path);
	s.next_in = in;
	s.avail_in = n;
	s.next_out = out;
	s.avail_out = out_size + 1;
	r = lzma_code(&s, LZMA_FINISH);
	if (r != LZMA_STREAM_END) {
		lzma_end(&s);
		switch (r) {
		case LZMA_OK:
		case LZMA_BUF_ERROR:
			if (s.avail_out == 0)
				fatal("%s: xz payload larger than the %zu bytes its trailer announces",
				      path, out_size);
			fatal("%s: truncated xz payload (%zu of %zu bytes decoded)",
			      path, out_size + 1 - s.avail_out, out_size);
		case LZMA_FORMAT_ERROR:
			fatal("%s: payload is not in xz format", path);
		case LZMA_DATA_ERROR:
			fatal("%s: corrupt xz payload (at output byte %zu)",
			      path, out_size + 1 - s.avail_out);
		default:
			fatal("%s: xz decoder error %d", path, (int)r);
		}
	}
	if (s.total_out != out_size)
		fatal("%s: xz payload is %" PRIu64 " bytes, its trailer says %zu",
		      path, (uint64_t)s.total_out, out_size);
	lzma_end(&s);
	return out;
}

/*
 * The kernel's LZ4 payload (Debian 12's -cloud-amd64 images) is the legacy
 * LZ4 frame ("lz4 -l"): a magic, then blocks, each a 4-byte little-endian
 * compressed size and an LZ4 block of at most 8 MiB decompressed.
 */
#define LZ4_LEGACY_MAGIC	0x184c2102u
#define LZ4_LEGACY_BLOCK	(8u << 20)
static uint8_t *unpack_lz4(const char *path, const uint8_t *in, size_t n,
			   size_t out_size)
{
	uint8_t *out = xmalloc(out_size + 1);
	size_t i = 4, o = 0;

	while (i + 4 <= n) {
		uint32_t bsize = le32(in + i);
		int got;

		if (bsize == LZ4_LEGACY_MAGIC) {	/* a concatenated stream */
			i += 4;
			continue;
		}
		i += 4;
		if (bsize == 0 || bsize > n - i)
			fatal("%s: LZ4 block of %u bytes at payload offset %zu overruns the payload",
			      path, bsize, i - 4);
		if (o >= out_size)
			fatal("%s: LZ4 payload larger than the %zu bytes its trailer announces",
			      path, out_size);
		got = LZ4_decompress_safe((const char *)in + i, (char *)out + o, (int)bsize,
					  (int)(out_size - o < LZ4_LEGACY_BLOCK ?
						out_size - o : LZ4_LEGACY_BLOCK));
		if (got < 0)
			fatal("%s: corrupt LZ4 block at payload offset %zu", path, i - 4);
		o += (size_t)got;
		i += bsize;
	}
	if (o != out_size)
		fatal("%s: LZ4 payload gave %zu bytes, its trailer announces %zu",
		      path, o, out_size);
	return out;
}

static uint8_t *unpack_zstd(const char *path, const uint8_t *in, size_t n,
			    size_t out_size)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	uint8_t *out = xmalloc(out_size + 1);
	ZSTD_inBuffer ib = { in, n, 0 };
	ZSTD_outBuffer ob = { out, out_size + 1, 0 };
	size_t r;

	if (!dc)
		fatal("%s: cannot initialise the zstd decoder", path);
	/* the kernel compresses with --ultra -22: allow its large window */
	ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, 31);
	for (;;) {
		r = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(r))
			fatal("%s: corrupt zstd payload: %s", path,
			      ZSTD_getErrorName(r));
		if (r == 0)
			break;
		if (ob.pos == ob.size)
			fatal("%s: zstd payload larger than the %zu bytes its trailer announces",
			      path, out_size);
		if (ib.pos == ib.size)
			fatal("%s: truncated zstd payload (%zu of %zu bytes decoded)",
			      path, ob.pos, out_size);
	}
	ZSTD_freeDCtx(dc);
	if (ob.pos != out_size)
		fatal("%s: zstd payload is %zu bytes, its trailer says %zu",
		      path, ob.pos, out_size);
	return out;
}

/*
 * A bzImage (Documentation/arch/x86/boot.rst): the setup header at 0x1f1
 * ("HdrS" at 0x202), the protected-mode code at (setup_sects + 1) * 512,
 * payload_offset/payload_length (0x248/0x24c) relative to it.  The kernel
 * build appends the uncompressed size as the payload's last 4 bytes.
 */
static void unpack_image(struct image *img)
{
	const char *path = img->path;
	size_t n, base, poff, plen, usize;
	const uint8_t *pl;
	uint8_t *f;
	unsigned int setup;

	f = read_file(path, &n);
	if (n >= SELFMAG && memcmp(f, ELFMAG, SELFMAG) == 0) {
		img->elf_data = f;	/* an uncompressed vmlinux */
		img->elf_size = n;
		return;
	}
	if (n == 0)
		fatal("%s: empty file, not a kernel image", path);
	if (n < 0x250 || memcmp(f + 0x202, "HdrS", 4) != 0)
		fatal("%s: not a bzImage (no \"HdrS\" setup header at 0x202) nor an ELF vmlinux",
		      path);
	if (le16(f + 0x206) < 0x208)
		fatal("%s: boot protocol %#x has no payload fields", path,
		      le16(f + 0x206));
	setup = f[0x1f1] ? f[0x1f1] : 4;
	base = (setup + 1) * 512;
	poff = le32(f + 0x248);
	plen = le32(f + 0x24c);
	if (plen < 16)
		fatal("%s: bzImage payload of %zu bytes is too short", path,
		      plen);
	if (base + poff + plen > n)
		fatal("%s: truncated image: payload ends at byte %zu, file has %zu",
		      path, base + poff + plen, n);
	pl = f + base + poff;
	usize = le32(pl + plen - 4);
	if (usize < 4096 || usize > MAX_UNPACKED)
		fatal("%s: implausible uncompressed size %zu in payload trailer",
		      path, usize);
	if (memcmp(pl, "\xfd\x37\x7a\x58\x5a\x00", 6) == 0)
		img->elf_data = unpack_xz(path, pl, plen - 4, usize);
	else if (memcmp(pl, "\x28\xb5\x2f\xfd", 4) == 0)
		img->elf_data = unpack_zstd(path, pl, plen - 4, usize);
	else if (le32(pl) == LZ4_LEGACY_MAGIC)
		img->elf_data = unpack_lz4(path, pl, plen - 4, usize);
	else if (pl[0] == 0x1f && pl[1] == 0x8b)
		fatal("%s: gzip payload not supported (Debian uses xz, zstd or lz4)",
		      path);
	else
		fatal("%s: unknown payload compression (magic %02x %02x %02x %02x)",
		      path, pl[0], pl[1], pl[2], pl[3]);
	img->elf_size = usize;
	free(f);
}

static const struct section *sec_by_name(const struct image *img,
					 const char *name)
{
	size_t i;

	for (i = 0; i < img->nsecs; i++)
		if (strcmp(img->secs[i].name, name) == 0)
			return &img->secs[i];
	return NULL;
}

/* The section at kernel address a (not the zero-based per-cpu one). */
static const struct section *sec_of(const struct image *img, uint64_t a)
{
	size_t i;

	if (a < img->lo || a >= img->hi)
		return NULL;
	for (i = 0; i < img->nsecs; i++) {
		const struct section *s = &img->secs[i];

		if (s != img->percpu && a >= s->addr && a - s->addr < s->size)
			return s;
	}
	return NULL;
}

/* Bytes [a, a + n) of the image's file contents, or NULL. */
static const uint8_t *ptr_at(const struct image *img, uint64_t a, uint64_t n)
{
	const struct section *s = sec_of(img, a);

	if (!s || !s->data || n > s->size || a - s->addr > s->size - n)
		return NULL;
	return s->data + (a - s->addr);
}

static bool sec_exec(const struct section *s)
{
	return s && (s->flags & SHF_EXECINSTR);
}

static void load_elf(struct image *img)
{
	size_t shnum, shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *scn;

	elf_version(EV_CURRENT);
	img->elf = elf_memory((char *)img->elf_data, img->elf_size);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF)
		fatal("%s: payload is not an ELF file", img->path);
	if (!gelf_getehdr(img->elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64)
		fatal("%s: payload is not an x86-64 ELF64 vmlinux", img->path);
	if (elf_getshdrnum(img->elf, &shnum) || elf_getshdrstrndx(img->elf, &shstrndx))
		fatal("%s: vmlinux has no section headers: %s", img->path,
		      elf_errmsg(-1));
	img->secs = xcalloc(shnum, sizeof(*img->secs));
	img->lo = UINT64_MAX;
	for (scn = NULL; (scn = elf_nextscn(img->elf, scn));) {
		struct section *s = &img->secs[img->nsecs];
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			fatal("%s: bad section header: %s", img->path,
			      elf_errmsg(-1));
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0)
			continue;
		name = elf_strptr(img->elf, shstrndx, sh.sh_name);
		if (!name)
			fatal("%s: section name out of range", img->path);
		s->name = name;
		s->addr = sh.sh_addr;
		s->size = sh.sh_size;
		s->flags = sh.sh_flags;
		if (sh.sh_type != SHT_NOBITS) {
			if (sh.sh_offset > img->elf_size ||
			    sh.sh_size > img->elf_size - sh.sh_offset)
				fatal("%s: section %s lies outside the vmlinux file",
				      img->path, name);
			s->data = img->elf_data + sh.sh_offset;
		}
		if (strcmp(name, ".data..percpu") == 0 && s->addr == 0) {
			img->percpu = s;
		} else {
			if (s->addr < img->lo)
				img->lo = s->addr;
			if (s->addr + s->size > img->hi)
				img->hi = s->addr + s->size;
		}
		img->nsecs++;
	}
	img->rodata = sec_by_name(img, ".rodata");
	if (!img->rodata || !img->rodata->data || !sec_by_name(img, ".text"))
		fatal("%s: vmlinux has no .text/.rodata section", img->path);
}

/* NT_GNU_BUILD_ID of the .notes section, if the build recorded one. */
static void find_build_id(struct image *img)
{
	const struct section *s = sec_by_name(img, ".notes");
	size_t off = 0;

	snprintf(img->build_id, sizeof(img->build_id), "none");
	if (!s || !s->data)
		return;
	while (off + 12 <= s->size) {
		const uint8_t *p = s->data + off;
		uint32_t nsz = le32(p), dsz = le32(p + 4), type = le32(p + 8);
		size_t nal = (nsz + 3) & ~3u, dal = (dsz + 3) & ~3u, i;

		if (nal > s->size - off - 12 || dal > s->size - off - 12 - nal)
			return;
		if (type == 3 && nsz == 4 && memcmp(p + 12, "GNU", 4) == 0 &&
		    dsz > 0 && dsz <= 64) {
			for (i = 0; i < dsz; i++)
				sprintf(img->build_id + 2 * i, "%02x",
					p[12 + nal + i]);
			return;
		}
		off += 12 + nal + dal;
	}
}

/* ------------------------------------------------------------------ */
/* kallsyms                                                           */
/* ------------------------------------------------------------------ */

struct tokens {
	const uint8_t *table;	/* in .rodata */
	uint16_t index[256];
	uint8_t len[256];
};

static bool ksym_char(uint8_t c)
{
	return c > 0x20 && c < 0x7f;
}

/*
 * kallsyms_token_table is 256 NUL-terminated strings, kallsyms_token_index
 * right after it (aligned) their 256 u16 start offsets.  Check the pair
 * with the index at rodata offset p; returns the table offset or -1.
 */
static long check_tokens(const struct section *ro, size_t p, struct tokens *tk)
{
	const uint8_t *d = ro->data;
	size_t t, i, last;

	for (i = 0; i < 256; i++)
		tk->index[i] = le16(d + p + 2 * i);
	if (tk->index[0] != 0)
		return -1;
	for (i = 0; i < 255; i++) {
		unsigned int step = tk->index[i + 1] - tk->index[i];

		if (tk->index[i + 1] <= tk->index[i] || step < 2 || step > 64)
			return -1;
	}
	last = tk->index[255];
	for (t = p >= last + 80 ? (p - last - 80) & ~(size_t)3 : 0;
	     t + last + 2 <= p; t += 4) {
		const uint8_t *tt = d + t;
		size_t end;

		for (i = 0; i < 256; i++) {
			size_t a = tk->index[i];
			size_t b = i < 255 ? tk->index[i + 1] - 1u : 0, k;

			if (i == 255) {
				for (b = a; t + b < p && tt[b]; b++)
					;
				if (t + b >= p || b == a)
					break;
			}
			for (k = a; k < b; k++)
				if (!ksym_char(tt[k]))
					break;
			if (k < b || tt[b] != 0)
				break;
			tk->len[i] = (uint8_t)(b - a);
		}
		if (i < 256)
			continue;
		end = t + last + tk->len[255] + 1;
		if (p - end >= 8)
			continue;
		for (; end < p && d[end] == 0; end++)
			;
		if (end != p)
			continue;
		tk->table = tt;
		return (long)t;
	}
	return -1;
}

/* Expand name entry at p (after its length) of len bytes into out. */
static int expand_name(const struct tokens *tk, const uint8_t *p, size_t len,
		       char *out)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		unsigned int t = p[i];

		if (o + tk->len[t] >= KSYM_MAX)
			return -1;
		memcpy(out + o, tk->table + tk->index[t], tk->len[t]);
		o += tk->len[t];
	}
	out[o] = '\0';
	return (int)o;
}

/* Parse one ULEB128 (1 or 2 bytes) length; returns header bytes or 0. */
static size_t name_len(const uint8_t *p, size_t avail, size_t *len)
{
	if (avail < 1)
		return 0;
	if (!(p[0] & 0x80)) {
		*len = p[0];
		return *len ? 1 : 0;
	}
	if (avail < 2 || (p[1] & 0x80))
		return 0;
	*len = (p[0] & 0x7f) | (size_t)p[1] << 7;
	return 2;
}

/*
 * Walk n name entries from rodata offset s; check the markers at m (every
 * 256th entry's offset).  Returns the offset just past the names or 0.
 */
static size_t walk_names(const struct section *ro, size_t s, uint64_t n,
			 size_t m)
{
	const uint8_t *d = ro->data;
	size_t off = s, len, h;
	uint64_t i;

	for (i = 0; i < n; i++) {
		if ((i & 255) == 0) {
			if (m + 4 * (i >> 8) + 4 > ro->size ||
			    le32(d + m + 4 * (i >> 8)) != off - s)
				return 0;
		}
		h = name_len(d + off, ro->size - off, &len);
		if (!h || len > ro->size - off - h)
			return 0;
		off += h + len;
		if (off > m)
			return 0;
	}
	return off;
}

/*
 * kallsyms_num_syms (u32) is followed by kallsyms_names (in every layout
 * scripts/kallsyms.c has written so far), kallsyms_markers right after
 * the names.  Find the markers by their shape (0, then increasing steps
 * of a few hundred to a few thousand bytes), then the count before the
 * names that makes the walk land on them.
 */
static bool find_names(const struct section *ro, uint64_t *n_out,
		       size_t *num_off, size_t *names_off, size_t *markers_off)
{
	const uint8_t *d = ro->data;
	const size_t step_max = 256 * (KSYM_MAX + 2);
	size_t m, found = 0;

	for (m = 0; m + 16 <= ro->size; m += 4) {
		size_t r, rr, last, lo, nn;

		if (le32(d + m) != 0 || le32(d + m + 4) < 512 ||
		    le32(d + m + 4) > step_max)
			continue;
		for (r = 1; m + 4 * r + 4 <= ro->size; r++) {
			uint32_t a = le32(d + m + 4 * (r - 1));
			uint32_t b = le32(d + m + 4 * r);

			if (b <= a || b - a < 512 || b - a > step_max)
				break;
		}
		if (r < 4)
			continue;
		/* r markers run; the real count may be a few less */
		for (rr = r; rr + 3 >= r && rr >= 4; rr--) {
			last = le32(d + m + 4 * (rr - 1));
			if (last + 16 > m)
				continue;
			lo = m > last + step_max + 16 ? m - last - step_max - 16 : 0;
			for (nn = (m - last - 6) & ~(size_t)3; nn >= lo && nn >= 4;
			     nn -= 4) {
				uint64_t n = le32(d + nn);
				size_t s, end;

				if (n == 0 || (n + 255) / 256 != rr)
					continue;
				s = le32(d + nn + 4) == 0 ? nn + 8 : nn + 4;
				end = walk_names(ro, s, n, m);
				if (!end || m - end >= 8)
					continue;
				while (end < m && d[end] == 0)
					end++;
				if (end != m)
					continue;
				if (found++)
					return false;	/* ambiguous */
				*n_out = n;
				*num_off = nn;
				*names_off = s;
				*markers_off = m;
				break;
			}
			if (found)
				break;
		}
		if (found)
			break;
	}
	return found == 1;
}

/* Inside a section (linker symbols may sit at its end: _etext, _end)? */
static bool addr_in_section(const struct image *img, uint64_t a)
{
	size_t i;

	for (i = 0; i < img->nsecs; i++) {
		const struct section *s = &img->secs[i];

		if (a >= s->addr && a - s->addr <= s->size)
			return true;
	}
	return false;
}

/*
 * Inside the image: the per-cpu range or the span of the kernel sections
 * (page-aligned markers such as __end_rodata fall between two).
 */
static bool addr_ok(const struct image *img, uint64_t a)
{
	if (img->percpu && a <= img->percpu->size)
		return true;
	return a >= img->lo && a <= img->hi;
}

enum ks_mode { KS_REL, KS_ABSPERCPU, KS_PCREL };

static uint64_t ks_addr(const uint8_t *p, uint64_t vaddr, uint64_t base,
			enum ks_mode mode)
{
	int32_t v = (int32_t)le32(p);

	switch (mode) {
	case KS_REL:
		return base + (uint32_t)v;
	case KS_ABSPERCPU:
		return v >= 0 ? (uint64_t)v : base - 1 - (int64_t)v;
	default:
		return vaddr + (int64_t)v;
	}
}

/*
 * Do the n offsets at rodata offset o decode, in this mode, to sorted
 * addresses inside the image?  (probe: only the first 64)
 */
static bool check_offsets(const struct image *img, size_t o, uint64_t n,
			  uint64_t base, enum ks_mode mode, bool probe)
{
	const struct section *ro = img->rodata;
	uint64_t i, prev = 0, a, lim = probe && n > 64 ? 64 : n;

	if (o + 4 * n > ro->size)
		return false;
	for (i = 0; i < lim; i++) {
		a = ks_addr(ro->data + o + 4 * i, ro->addr + o + 4 * i, base, mode);
		if (a < prev || !addr_ok(img, a))
			return false;
		prev = a;
	}
	return true;
}

/*
 * kallsyms_offsets: n s32.  6.1/6.12 add kallsyms_relative_base (a u64
 * right after the offsets, aligned) and, with KALLSYMS_ABSOLUTE_PERCPU,
 * store per-cpu symbols as non-negative absolute values; 7.x stores
 * place-relative offsets and no base.  Searched near the other tables.
 */
static bool find_offsets(struct image *img, uint64_t n, size_t lo, size_t hi,
			 size_t *o_out, uint64_t *base_out, size_t *base_off,
			 enum ks_mode *mode_out)
{
	const struct section *ro = img->rodata;
	size_t o, b;
	enum ks_mode mode;

	if (hi > ro->size)
		hi = ro->size;
	/*
	 * scripts/kallsyms.c aligns every table to 8 bytes: a search in
	 * 4-byte steps can find a table shifted by one entry that still
	 * looks sorted (6.1.0-57-rt-amd64), every name then one address off.
	 */
	for (o = lo & ~(size_t)7; o + 4 * n <= hi; o += 8) {
		b = (o + 4 * n + 7) & ~(size_t)7;
		if (b + 8 <= ro->size) {
			uint64_t base = le64(ro->data + b);

			if (base >= img->lo && base < img->hi) {
				for (mode = KS_REL; mode <= KS_ABSPERCPU; mode++) {
					if (!check_offsets(img, o, n, base, mode, true) ||
					    !check_offsets(img, o, n, base, mode, false))
						continue;
					*o_out = o;
					*base_out = base;
					*base_off = b;
					*mode_out = mode;
					return true;
				}
			}
		}
		if (check_offsets(img, o, n, 0, KS_PCREL, true) &&
		    check_offsets(img, o, n, 0, KS_PCREL, false)) {
			*o_out = o;
			*base_out = 0;
			*base_off = 0;
			*mode_out = KS_PCREL;
			return true;
		}
	}
	return false;
}

static int cmp_name_only(const struct image *img, uint32_t a, uint32_t b)
{
	return strcmp(img->syms[a].name, img->syms[b].name);
}

/* kallsyms_seqs_of_names: n 3-byte big-endian indices, by name. */
static bool check_seqs(const struct image *img, size_t s, uint64_t n,
		       uint8_t *seen)
{
	const uint8_t *d = img->rodata->data + s;
	uint64_t i;
	uint32_t prev = 0, q;

	if (s + 3 * n > img->rodata->size)
		return false;
	memset(seen, 0, n);
	for (i = 0; i < n; i++) {
		q = (uint32_t)d[3 * i] << 16 | (uint32_t)d[3 * i + 1] << 8 |
		    d[3 * i + 2];
		if (q >= n || seen[q])
			return false;
		seen[q] = 1;
		if (i && cmp_name_only(img, prev, q) > 0)
			return false;
		prev = q;
	}
	return true;
}

static const struct image *cmp_img;	/* qsort context (one thread) */

static int cmp_by_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = strcmp(cmp_img->syms[x].name, cmp_img->syms[y].name);

	if (r)
		return r;
	return x < y ? -1 : x > y;
}

static void load_kallsyms(struct image *img)
{
	const struct section *ro = img->rodata;
	struct tokens tk;
	size_t p, tok_off = 0, tok_idx = 0, num_off, names_off, markers_off;
	size_t off_off, base_off, lo, hi, off, h, len = 0;
	uint64_t n, base, i;
	enum ks_mode mode;
	int ntok = 0;
	char name[KSYM_MAX];
	uint8_t *seen;
	struct tokens found;
	size_t cands[3];

	for (p = 0; p + 512 <= ro->size; p += 4) {
		long t;

		if (ro->data[p] || ro->data[p + 1] || ro->data[p + 2] == 0)
			continue;
		t = check_tokens(ro, p, &tk);
		if (t < 0)
			continue;
		if (ntok++) {
			fatal("%s: two kallsyms token tables (at %#" PRIx64 " and %#" PRIx64 ")",
			      img->path, ro->addr + tok_off, ro->addr + (size_t)t);
		}
		found = tk;
		tok_off = (size_t)t;
		tok_idx = p;
	}
	if (!ntok)
		fatal("%s: no kallsyms found (no token table in .rodata; CONFIG_KALLSYMS off?)",
		      img->path);
	tk = found;
	if (!find_names(ro, &n, &num_off, &names_off, &markers_off))
		fatal("%s: no kallsyms found (no unique names/markers tables)",
		      img->path);
	lo = num_off < tok_off ? num_off : tok_off;
	hi = tok_idx > markers_off ? tok_idx : markers_off;
	lo = lo > 4 * n + 64 ? lo - 4 * n - 64 : 0;
	hi += 512 + 4 * n + 64;	/* token_index, then the offsets */
	if (!find_offsets(img, n, lo, hi, &off_off, &base, &base_off, &mode))
		fatal("%s: kallsyms offsets table not found", img->path);

	img->nsyms = n;
	img->syms = xcalloc(n, sizeof(*img->syms));
	for (i = 0, off = names_off; i < n; i++) {
		struct symbol *s = &img->syms[i];
		int l;

		h = name_len(ro->data + off, ro->size - off, &len);
		l = expand_name(&tk, ro->data + off + h, len, name);
		if (l < 2)
			fatal("%s: kallsyms name %" PRIu64 " does not decode", img->path, i);
		s->type = name[0];
		s->name = xstrdup(name + 1);
		s->addr = ks_addr(ro->data + off_off + 4 * i,
				  ro->addr + off_off + 4 * i, base, mode);
		off += h + len;
	}

	/* kallsyms_seqs_of_names (5.19+): a check of the decoded names */
	seen = xmalloc(n);
	memset(&img->ks, 0, sizeof(img->ks));
	cands[0] = (markers_off + 4 * ((n + 255) / 256) + 7) & ~(size_t)7;
	cands[1] = base_off ? base_off + 8 : 0;
	cands[2] = (off_off + 4 * n + 3) & ~(size_t)3;
	for (p = 0; p < 3; p++) {
		size_t s = cands[p];

		if (s && check_seqs(img, s, n, seen)) {
			img->ks.seqs = ro->addr + s;
			break;
		}
		if (s && check_seqs(img, (s + 7) & ~(size_t)7, n, seen)) {
			img->ks.seqs = ro->addr + ((s + 7) & ~(size_t)7);
			break;
		}
	}
	free(seen);
	img->ks.num_syms = ro->addr + num_off;
	img->ks.names = ro->addr + names_off;
	img->ks.markers = ro->addr + markers_off;
	img->ks.token_table = ro->addr + tok_off;
	img->ks.token_index = ro->addr + tok_idx;
	img->ks.offsets = ro->addr + off_off;
	img->ks.relative_base = base_off ? ro->addr + base_off : 0;
	img->ks.mode = mode == KS_REL ? "base-relative" :
		       mode == KS_ABSPERCPU ? "base-relative, absolute per-cpu" :
		       "place-relative";

	img->by_name = xmalloc(n * sizeof(*img->by_name));
	for (i = 0; i < n; i++)
		img->by_name[i] = (uint32_t)i;
	cmp_img = img;
	qsort(img->by_name, n, sizeof(*img->by_name), cmp_by_name);
}

/* First index in by_name of a name >= name (nsyms when none). */
static size_t name_lower(const struct image *img, const char *name)
{
	size_t lo = 0, hi = img->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(img->syms[img->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct symbol *sym_by_name(const struct image *img,
					const char *name)
{
	size_t k = name_lower(img, name);

	if (k < img->nsyms && strcmp(img->syms[img->by_name[k]].name, name) == 0)
		return &img->syms[img->by_name[k]];
	return NULL;
}

/* Index of the last symbol with addr <= a, or -1. */
static long sym_floor(const struct image *img, uint64_t a)
{
	size_t lo = 0, hi = img->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (img->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/*
 * A linker-script marker (__start_X, __stop_X, __end_X, __X_start, __X_end)
 * shares its address with whatever the linker placed next.
 */
static bool linker_marker(const char *s)
{
	size_t n = strlen(s);

	if (n < 8 || strncmp(s, "__", 2))
		return false;
	return !strncmp(s + 2, "start_", 6) || !strncmp(s + 2, "stop_", 5) ||
	       !strncmp(s + 2, "end_", 4) || !strcmp(s + n - 6, "_start") ||
	       !strcmp(s + n - 4, "_end");
}

/* Is x a better name than y for their shared address? */
static bool better_alias(const char *x, const char *y)
{
	bool mx = linker_marker(x), my = linker_marker(y);
	size_t ux = strspn(x, "_"), uy = strspn(y, "_");

	if (mx != my)
		return my;
	if (ux != uy)
		return ux < uy;
	return strcmp(x, y) < 0;
}

/*
 * The name to call address a by when symbols share it, independent of
 * which markers happen to coincide in a build: not a linker marker, then
 * fewest leading underscores, then the smallest.
 */
static const struct symbol *sym_canon(const struct image *img, long i)
{
	const struct symbol *best = &img->syms[i];
	long j;

	for (j = i - 1; j >= 0 && img->syms[j].addr == best->addr; j--)
		if (better_alias(img->syms[j].name, best->name))
			best = &img->syms[j];
	for (j = i + 1; (size_t)j < img->nsyms &&
	     img->syms[j].addr == img->syms[i].addr; j++)
		if (better_alias(img->syms[j].name, best->name))
			best = &img->syms[j];
	return best;
}

/* End of symbol i: the next greater symbol address, within its section. */
static uint64_t sym_end(const struct image *img, size_t i)
{
	uint64_t a = img->syms[i].addr, end;
	const struct section *s = sec_of(img, a);
	size_t j;

	if (a < img->lo && img->percpu && a < img->percpu->size)
		s = img->percpu;
	end = s ? s->addr + s->size : a;
	for (j = i + 1; j < img->nsyms; j++) {
		if (img->syms[j].addr > a) {
			if (img->syms[j].addr < end)
				end = img->syms[j].addr;
			break;
		}
	}
	return end;
}

/* Kernel release, UTS version and toolchain from linux_banner. */
static void load_banner(struct image *img)
{
	const struct symbol *b = sym_by_name(img, "linux_banner");
	const char *p = NULL, *e, *q;
	const struct section *ro = img->rodata;
	int depth;

	if (b)
		p = (const char *)ptr_at(img, b->addr, 16);
	if (!p || strncmp(p, "Linux version ", 14) != 0)
		p = memmem(ro->data, ro->size, "Linux version ", 14);
	if (!p)
		fatal("%s: no \"Linux version\" banner in .rodata", img->path);
	e = memchr(p, '\n', (const char *)ro->data + ro->size - p);
	if (!e || e - p > 1024)
		fatal("%s: banner not terminated", img->path);
	img->banner = xstrndup(p, (size_t)(e - p));
	p = img->banner + 14;
	q = strchr(p, ' ');
	if (!q)
		fatal("%s: malformed banner: %s", img->path, img->banner);
	img->release = xstrndup(p, (size_t)(q - p));
	if (sscanf(img->release, "%d.%d", &img->ver_major, &img->ver_minor) != 2)
		fatal("%s: banner release %s is not N.N...", img->path,
		      img->release);
	/* " (user@host) (compiler, linker) #UTS_VERSION" */
	p = q;
	for (int group = 0; group < 2; group++) {
		const char *start;

		while (*p == ' ')
			p++;
		if (*p != '(')
			fatal("%s: malformed banner: %s", img->path, img->banner);
		start = ++p;
		for (depth = 1; *p && depth; p++)
			depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		if (depth)
			fatal("%s: malformed banner: %s", img->path, img->banner);
		if (group == 1)
			img->toolchain = xstrndup(start, (size_t)(p - 1 - start));
	}
	while (*p == ' ')
		p++;
	img->version = xstrdup(p);
}

/* ------------------------------------------------------------------ */
/* Patch-site tables                                                  */
/* ------------------------------------------------------------------ */

static bool table_from_section(struct image *img, enum site_kind k,
			       const char *sec, size_t esize)
{
	const struct section *s = sec_by_name(img, sec);

	if (!s || !s->data)
		return false;
	if (s->size % esize)
		fatal("%s: %s is %" PRIu64 " bytes, not a multiple of %zu (unknown layout)",
		      img->path, sec, s->size, esize);
	img->tables[k] = (struct table){ s->addr, s->data, s->size / esize, esize };
	return true;
}

static bool table_from_syms(struct image *img, enum site_kind k,
			    const char *start, const char *stop, size_t esize)
{
	const struct symbol *a = sym_by_name(img, start);
	const struct symbol *b = sym_by_name(img, stop);
	const uint8_t *d;

	if (!a || !b || b->addr < a->addr)
		return false;
	if ((b->addr - a->addr) % esize)
		fatal("%s: %s..%s is not a multiple of %zu bytes (unknown layout)",
		      img->path, start, stop, esize);
	if (b->addr == a->addr)
		return true;
	d = ptr_at(img, a->addr, b->addr - a->addr);
	if (!d)
		fatal("%s: %s lies outside the image's data", img->path, start);
	img->tables[k] = (struct table){ a->addr, d, (b->addr - a->addr) / esize,
					 esize };
	return true;
}

static uint64_t tab_rel(const struct table *t, size_t i, size_t field)
{
	uint64_t at = t->start + i * t->esize + field;

	return at + (int64_t)(int32_t)le32(t->data + i * t->esize + field);
}

static const uint8_t *tab_ent(const struct table *t, size_t i)
{
	return t->data + i * t->esize;
}

static uint64_t site_addr(const struct image *img, enum site_kind k, size_t i)
{
	const struct table *t = &img->tables[k];

	switch (k) {
	case S_PARA:
	case S_FENTRY:
		return le64(tab_ent(t, i));
	default:
		return tab_rel(t, i, 0);
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void load_sites(struct image *img)
{
	bool pre63 = img->ver_major < 6 || (img->ver_major == 6 && img->ver_minor < 3);
	size_t k, i, total = 0;

	/* struct alt_instr grew a 16-bit flags field in 6.3 */
	table_from_section(img, S_ALT, ".altinstructions", pre63 ? 12 : 14);
	/* struct paravirt_patch_site { u8 *instr; u8 type; u8 len; } (< 6.8) */
	table_from_section(img, S_PARA, ".parainstructions", 16);
	table_from_syms(img, S_JUMP, "__start___jump_table", "__stop___jump_table", 16);
	table_from_syms(img, S_SCALL, "__start_static_call_sites",
			"__stop_static_call_sites", 8);
	if (!table_from_section(img, S_EX, "__ex_table", 12))
		table_from_syms(img, S_EX, "__start___ex_table", "__stop___ex_table", 12);
	table_from_section(img, S_RETPOLINE, ".retpoline_sites", 4);
	table_from_section(img, S_RETURN, ".return_sites", 4);
	table_from_section(img, S_CALLSITE, ".call_sites", 4);
	table_from_section(img, S_SEAL, ".ibt_endbr_seal", 4);
	table_from_section(img, S_LOCK, ".smp_locks", 4);
	/* struct bug_entry with relative pointers and BUGVERBOSE (6.x) */
	if (img->ver_major == 6)
		table_from_section(img, S_BUG, "__bug_table", 12);
	table_from_syms(img, S_FENTRY, "__start_mcount_loc", "__stop_mcount_loc", 8);

	img->tables_found[0] = '\0';
	for (k = 0; k < S_NKINDS; k++) {
		total += img->tables[k].count;
		if (img->tables[k].count) {
			if (img->tables_found[0])
				strcat(img->tables_found, ",");
			strcat(img->tables_found, site_names[k]);
		}
	}
	img->sites = xcalloc(total, sizeof(*img->sites));
	for (k = 0; k < S_NKINDS; k++)
		for (i = 0; i < img->tables[k].count; i++)
			img->sites[img->nsites++] = (struct site){
				site_addr(img, k, i), (uint32_t)i, (uint8_t)k };
	qsort(img->sites, img->nsites, sizeof(*img->sites), cmp_site);
}

/* ------------------------------------------------------------------ */
/* x86-64 instruction decoder: lengths and the fields to normalise     */
/* ------------------------------------------------------------------ */

/*
 * libopcodes (binutils) prints instructions as text and returns their
 * length, but does not say where a displacement or an immediate sits in
 * the bytes, which is what masking needs.  So this decoder finds the
 * fields (prefixes, REX/VEX/EVEX, opcode maps, ModRM/SIB, displacement,
 * immediate); when built with libopcodes every length is checked against
 * it (fingerprint refuses on a disagreement; see decoder-check).
 */
enum {
	F_MODRM = 1 << 0,
	F_I8 = 1 << 1,
	F_I16 = 1 << 2,
	F_IZ = 1 << 3,		/* 16 or 32 bits (operand size) */
	F_IV = 1 << 4,		/* 16, 32 or 64 bits (mov r, imm) */
	F_R8 = 1 << 5,		/* rel8 branch */
	F_RZ = 1 << 6,		/* rel32 branch */
	F_MOFFS = 1 << 7,	/* 64-bit absolute address (mov al, moffs) */
	F_BAD = 1 << 8,
	F_GRP3 = 1 << 9,	/* f6/f7: test has an immediate */
	F_ENTER = 1 << 10,	/* imm16 + imm8 */
	F_NODISP = 1 << 11,	/* mov cr/dr: ModRM is always registers */
};

static uint16_t op1[256], op2[256];

static void set_ops(uint16_t *t, int a, int b, uint16_t f)
{
	for (; a <= b; a++)
		t[a] = f;
}

static void init_decoder(void)
{
	static const uint8_t bad1[] = {
		0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37,
		0x3f, 0x60, 0x61, 0x82, 0x9a, 0xce, 0xd4, 0xd5, 0xd6, 0xea,
	};
	static const uint8_t none2[] = {
		0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32,
		0x33, 0x34, 0x35, 0x37, 0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9,
		0xaa,
	};
	static const uint8_t bad2[] = {
		0x04, 0x0a, 0x0c, 0x24, 0x25, 0x26, 0x27, 0x36, 0x39, 0x3b,
		0x3c, 0x3d, 0x3e, 0x3f, 0xa6, 0xa7,
	};
	size_t i;
	int op;

	for (op = 0; op < 0x40; op++) {
		switch (op & 7) {
		case 4:
			op1[op] = F_I8;
			break;
		case 5:
			op1[op] = F_IZ;
			break;
		default:
			op1[op] = F_MODRM;
		}
	}
	set_ops(op1, 0x40, 0x5f, 0);
	op1[0x63] = F_MODRM;
	op1[0x68] = F_IZ;
	op1[0x69] = F_MODRM | F_IZ;
	op1[0x6a] = F_I8;
	op1[0x6b] = F_MODRM | F_I8;
	set_ops(op1, 0x6c, 0x6f, 0);
	set_ops(op1, 0x70, 0x7f, F_R8);
	op1[0x80] = F_MODRM | F_I8;
	op1[0x81] = F_MODRM | F_IZ;
	op1[0x83] = F_MODRM | F_I8;
	set_ops(op1, 0x84, 0x8f, F_MODRM);
	set_ops(op1, 0x90, 0x9f, 0);
	set_ops(op1, 0xa0, 0xa3, F_MOFFS);
	set_ops(op1, 0xa4, 0xaf, 0);
	op1[0xa8] = F_I8;
	op1[0xa9] = F_IZ;
	set_ops(op1, 0xb0, 0xb7, F_I8);
	set_ops(op1, 0xb8, 0xbf, F_IV);
	op1[0xc0] = op1[0xc1] = F_MODRM | F_I8;
	op1[0xc2] = op1[0xca] = F_I16;
	op1[0xc3] = op1[0xc9] = op1[0xcb] = op1[0xcc] = op1[0xcf] = 0;
	op1[0xc6] = F_MODRM | F_I8;
	op1[0xc7] = F_MODRM | F_IZ;
	op1[0xc8] = F_ENTER;
	op1[0xcd] = F_I8;
	set_ops(op1, 0xd0, 0xd3, F_MODRM);
	op1[0xd7] = 0;
	set_ops(op1, 0xd8, 0xdf, F_MODRM);
	set_ops(op1, 0xe0, 0xe3, F_R8);
	set_ops(op1, 0xe4, 0xe7, F_I8);
	op1[0xe8] = op1[0xe9] = F_RZ;
	op1[0xeb] = F_R8;
	set_ops(op1, 0xec, 0xf5, 0);
	op1[0xf6] = op1[0xf7] = F_MODRM | F_GRP3;
	set_ops(op1, 0xf8, 0xfd, 0);
	op1[0xfe] = op1[0xff] = F_MODRM;
	for (i = 0; i < sizeof(bad1); i++)
		op1[bad1[i]] = F_BAD;

	set_ops(op2, 0x00, 0xff, F_MODRM);
	for (i = 0; i < sizeof(none2); i++)
		op2[none2[i]] = 0;
	for (i = 0; i < sizeof(bad2); i++)
		op2[bad2[i]] = F_BAD;
	op2[0x0f] = F_MODRM | F_I8;	/* 3DNow! */
	set_ops(op2, 0x20, 0x23, F_MODRM | F_NODISP);
	set_ops(op2, 0x70, 0x73, F_MODRM | F_I8);
	op2[0x77] = 0;
	set_ops(op2, 0x80, 0x8f, F_RZ);
	op2[0xa4] = op2[0xac] = op2[0xba] = op2[0xc2] = F_MODRM | F_I8;
	op2[0xc4] = op2[0xc5] = op2[0xc6] = F_MODRM | F_I8;
	set_ops(op2, 0xc8, 0xcf, 0);
}

struct insn {
	uint8_t len;
	uint8_t map;		/* 0 one-byte, 1 0f, 2 0f38, 3 0f3a */
	uint8_t op;
	uint8_t rex, seg;	/* REX byte, 0x64/0x65 segment override */
	bool opsz, adsz, rep, vex;
	bool modrm_ok;
	uint8_t modrm, mod, reg, rm;
	uint8_t disp_off, disp_size;
	bool rip, nobase;	/* RIP-relative; disp32 without a base */
	uint8_t imm_off, imm_size;
	bool rel;		/* the immediate is a branch displacement */
	uint8_t moffs_off;	/* F_MOFFS: 8-byte address at this offset */
};

/* Decode one instruction of at most avail bytes; false when invalid. */
static bool x86_decode(const uint8_t *p, size_t avail, struct insn *in)
{
	size_t i = 0, lim = avail < 15 ? avail : 15;
	unsigned int fl, imm = 0;
	bool rexw = false;
	uint8_t op;

	memset(in, 0, sizeof(*in));
	for (;; i++) {
		if (i >= lim)
			return false;
		switch (p[i]) {
		case 0x66:
			in->opsz = true;
			continue;
		case 0x67:
			in->adsz = true;
			continue;
		case 0x64:
		case 0x65:
			in->seg = p[i];
			continue;
		case 0xf2:
		case 0xf3:
			in->rep = true;
			continue;
		case 0x26:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0xf0:
			continue;
		}
		break;
	}
	if ((p[i] & 0xf0) == 0x40) {
		in->rex = p[i++];
		rexw = in->rex & 8;
		if (i >= lim)
			return false;
	}
	op = p[i++];
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		/* VEX3, VEX2, EVEX: in 64-bit mode never LES/LDS/BOUND */
		size_t nv = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;

		if (in->rex || i + nv >= lim)
			return false;
		in->vex = true;
		in->map = op == 0xc5 ? 1 : op == 0xc4 ? (p[i] & 0x1f) : (p[i] & 7);
		if (op != 0xc5)
			rexw = p[i + 1] & 0x80;
		i += nv;
		op = p[i++];
		if (in->map == 1)
			fl = op == 0x77 ? 0 : (op2[op] & (F_I8 | F_BAD)) | F_MODRM;
		else if (in->map == 2)
			fl = F_MODRM;
		else if (in->map == 3)
			fl = F_MODRM | F_I8;
		else
			return false;
	} else if (op == 0x0f) {
		if (i >= lim)
			return false;
		op = p[i++];
		in->map = 1;
		if (op == 0x38 || op == 0x3a) {
			if (i >= lim)
				return false;
			in->map = op == 0x38 ? 2 : 3;
			fl = op == 0x38 ? F_MODRM : F_MODRM | F_I8;
			op = p[i++];
		} else {
			fl = op2[op];
		}
	} else {
		fl = op1[op];
	}
	in->op = op;
	if (fl & F_BAD)
		return false;
	if (fl & F_MODRM) {
		if (i >= lim)
			return false;
		in->modrm_ok = true;
		in->modrm = p[i++];
		in->mod = in->modrm >> 6;
		in->reg = (in->modrm >> 3) & 7;
		in->rm = in->modrm & 7;
		if (in->mod != 3 && !(fl & F_NODISP)) {
			if (in->rm == 4) {
				if (i >= lim)
					return false;
				if (in->mod == 0 && (p[i] & 7) == 5) {
					in->disp_size = 4;
					in->nobase = true;
				}
				i++;
			} else if (in->mod == 0 && in->rm == 5) {
				in->disp_size = 4;
				in->rip = true;
			}
			if (in->mod == 1)
				in->disp_size = 1;
			else if (in->mod == 2)
				in->disp_size = 4;
		}
		in->disp_off = (uint8_t)i;
		i += in->disp_size;
	}
	if (fl & F_GRP3 && in->reg < 2)
		fl |= op == 0xf6 ? F_I8 : F_IZ;
	if (in->map == 0 && op == 0xc7 && in->modrm == 0xf8)
		fl = (fl & ~F_IZ) | F_RZ;	/* xbegin rel32 */
	if (fl & F_I8)
		imm = 1;
	else if (fl & F_I16)
		imm = 2;
	else if (fl & F_IZ)
		imm = in->opsz && !rexw ? 2 : 4;
	else if (fl & F_IV)
		imm = rexw ? 8 : in->opsz ? 2 : 4;
	else if (fl & F_R8)
		imm = 1;
	else if (fl & F_RZ)
		imm = 4;
	else if (fl & F_ENTER)
		imm = 3;
	in->rel = fl & (F_R8 | F_RZ);
	if (fl & F_MOFFS) {
		in->moffs_off = (uint8_t)i;
		imm = in->adsz ? 4 : 8;
	}
	in->imm_off = (uint8_t)i;
	in->imm_size = (uint8_t)imm;
	i += imm;
	if (i > lim)
		return false;
	in->len = (uint8_t)i;
	return true;
}

static int64_t field_sext(const uint8_t *p, unsigned int size)
{
	switch (size) {
	case 1:
		return (int8_t)p[0];
	case 2:
		return (int16_t)le16(p);
	case 4:
		return (int32_t)le32(p);
	case 8:
		return (int64_t)le64(p);
	}
	return 0;
}

/* int3, nop, xchg %ax,%ax, nopw/nopl (0f 1f /0): alignment filler. */
static bool is_padding(const uint8_t *p, const struct insn *in)
{
	if (in->len == 1 && p[0] == 0xcc)
		return true;
	if (in->map == 0 && in->op == 0x90 && !in->rex && !in->rep && !in->vex)
		return true;
	return in->map == 1 && in->op == 0x1f && !in->vex && in->reg == 0;
}

#ifdef KFP_OPCODES
/* libopcodes, for the length cross-check and for disasm's text. */
struct dis {
	struct disassemble_info info;
	disassembler_ftype print;
	char text[256];
	size_t len;
};

static void dis_add(struct dis *d, const char *fmt, va_list ap)
{
	if (d->len < sizeof(d->text) - 1) {
		int n = vsnprintf(d->text + d->len, sizeof(d->text) - d->len,
				  fmt, ap);

		if (n > 0)
			d->len += (size_t)n;
		if (d->len >= sizeof(d->text))
			d->len = sizeof(d->text) - 1;
	}
}

static int dis_printf(void *stream, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dis_add(stream, fmt, ap);
	va_end(ap);
	return 0;
}

static int dis_styled(void *stream, enum disassembler_style style,
		      const char *fmt, ...)
{
	va_list ap;

	(void)style;
	va_start(ap, fmt);
	dis_add(stream, fmt, ap);
	va_end(ap);
	return 0;
}

static struct dis *dis_get(void)
{
	static struct dis d;
	static bool ready;

	if (!ready) {
		init_disassemble_info(&d.info, &d, dis_printf, dis_styled);
		d.info.arch = bfd_arch_i386;
		d.info.mach = bfd_mach_x86_64;
		disassemble_init_for_target(&d.info);
		d.print = disassembler(bfd_arch_i386, false, bfd_mach_x86_64, NULL);
		if (!d.print)
			fatal("libopcodes has no x86-64 disassembler");
		ready = true;
	}
	return &d;
}

/* libopcodes' length of the instruction at p (and its text in d->text). */
static int dis_insn(const uint8_t *p, size_t avail, uint64_t addr)
{
	struct dis *d = dis_get();

	d->len = 0;
	d->text[0] = '\0';
	d->info.buffer = (bfd_byte *)p;
	d->info.buffer_vma = addr;
	d->info.buffer_length = avail < 16 ? avail : 16;
	return d->print(addr, &d->info);
}
#define HAVE_DIS 1
#else
#define HAVE_DIS 0
static int dis_insn(const uint8_t *p, size_t avail, uint64_t addr)
{
	(void)p; (void)avail; (void)addr;
	return -1;
}
#endif

/* ------------------------------------------------------------------ */
/* Normalising code                                                   */
/* ------------------------------------------------------------------ */

struct norm {
	const struct image *img;
	uint64_t ps, pe;	/* the part being normalised: refs become L+off */
	uint64_t rs, re;	/* a replacement being normalised: R+off */
	int depth;
	bool check;		/* cross-check lengths with libopcodes */
	bool listing;		/* disasm: append libopcodes text */
	unsigned long disagree;
};

static size_t norm_insn(struct norm *c, const uint8_t *p, size_t avail,
			uint64_t addr, struct sbuf *out, struct insn *in);

static bool is_cstring(const uint8_t *p, size_t avail, size_t *len)
{
	size_t i;

	for (i = 0; i < avail && i < 4096; i++) {
		if (p[i] == 0)
			break;
		if (!(isprint(p[i]) || p[i] == '\n' || p[i] == '\t'))
			return false;
	}
	if (i == 0 || i >= avail || i >= 4096)
		return false;
	*len = i;
	return true;
}

/*
 * How address a reads in a normalised listing: an offset into the part
 * (L+) or replacement (R+), a symbol (+ offset), a string literal by its
 * text, the .altinstr_aux snippet (static_cpu_has) by its normalised code,
 * or a section and offset when nothing better names it.
 */
static void fmt_ref(struct norm *c, uint64_t a, bool percpu, struct sbuf *out)
{
	const struct image *img = c->img;
	const struct section *s;
	const struct symbol *sym;
	const uint8_t *d;
	size_t slen;
	long i;

	if (percpu) {
		i = sym_floor(img, a);
		if (i >= 0) {
			sym = sym_canon(img, i);
			if (sym->addr == a)
				sb_printf(out, "%%%s", sym->name);
			else
				sb_printf(out, "%%%s+%#" PRIx64, sym->name, a - sym->addr);
		} else {
			sb_printf(out, "%%%#" PRIx64, a);
		}
		return;
	}
	if (c->pe && a >= c->ps && a < c->pe) {
		sb_printf(out, "L+%#" PRIx64, a - c->ps);
		return;
	}
	if (c->re && a >= c->rs && a < c->re) {
		sb_printf(out, "R+%#" PRIx64, a - c->rs);
		return;
	}
	s = sec_of(img, a);
	if (s && strcmp(s->name, ".altinstr_aux") == 0 && c->depth == 0 && s->data) {
		struct norm sub = *c;
		uint64_t at = a;
		int k;

		sub.depth = 1;
		sub.listing = false;
		sb_puts(out, "aux{");
		for (k = 0; k < 8; k++) {
			struct insn in;
			size_t n;

			d = ptr_at(img, at, 1);
			if (!d)
				break;
			n = norm_insn(&sub, d, s->addr + s->size - at, at, out, &in);
			if (!n)
				break;
			sb_puts(out, ";");
			at += n;
			if (in.map == 0 && (in.op == 0xe9 || in.op == 0xeb))
				break;
		}
		sb_puts(out, "}");
		c->disagree += sub.disagree;
		return;
	}
	i = sym_floor(img, a);
	sym = i >= 0 ? sym_canon(img, i) : NULL;
	if (sym && sym->addr == a) {
		sb_puts(out, sym->name);
		return;
	}
	d = s && !sec_exec(s) && !strcmp(s->name, ".rodata") ? ptr_at(img, a, 1) : NULL;
	if (d && is_cstring(d, s->addr + s->size - a, &slen)) {
		char h[HASH_HEX + 1];
		size_t k;

		sb_puts(out, "str\"");
		for (k = 0; k < slen && k < 32; k++) {
			if (isalnum(d[k]) || strchr(" _-.:%/=", d[k]))
				sb_printf(out, "%c", d[k]);
			else
				sb_printf(out, "\\x%02x", d[k]);
		}
		hash_str((const char *)d, slen, h);
		sb_printf(out, "\"#%zu:%.8s", slen, h);
		return;
	}
	if (sym && s && sec_of(img, sym->addr) == s) {
		sb_printf(out, "%s+%#" PRIx64, sym->name, a - sym->addr);
		return;
	}
	if (s)
		sb_printf(out, "%s+%#" PRIx64, s->name, a - s->addr);
	else
		sb_printf(out, "abs:%#" PRIx64, a);
}

static bool in_image(const struct image *img, uint64_t a)
{
	return a >= img->lo && a < img->hi;
}

/*
 * Normalise the instruction at p/addr into one listing line: its bytes in
 * hex with every address field as "xx", then what each field refers to.
 * Returns its length (0 if it does not decode).
 */
static size_t norm_insn(struct norm *c, const uint8_t *p, size_t avail,
			uint64_t addr, struct sbuf *out, struct insn *in)
{
	bool mask[16] = { false };
	struct sbuf refs = { 0 };
	uint64_t next, v;
	size_t k;
	int olen;

	if (!x86_decode(p, avail, in))
		return 0;
	if (c->check && HAVE_DIS) {
		olen = dis_insn(p, avail, addr);
		if (olen != in->len)
			c->disagree++;
	}
	next = addr + in->len;
	if (in->rel) {
		v = next + (uint64_t)field_sext(p + in->imm_off, in->imm_size);
		sb_puts(&refs, " ->");
		fmt_ref(c, v, false, &refs);
		memset(mask + in->imm_off, 1, in->imm_size);
	}
	if (in->rip) {
		v = next + (uint64_t)field_sext(p + in->disp_off, 4);
		sb_puts(&refs, " rip:");
		fmt_ref(c, v, false, &refs);
		memset(mask + in->disp_off, 1, 4);
	} else if (in->disp_size == 4) {
		v = (uint64_t)field_sext(p + in->disp_off, 4);
		if (in->seg == 0x65 && in->nobase && c->img->percpu &&
		    v < c->img->percpu->size) {
			sb_puts(&refs, " gs:");
			fmt_ref(c, v, true, &refs);
			memset(mask + in->disp_off, 1, 4);
		} else if (in_image(c->img, v)) {
			sb_puts(&refs, " disp:");
			fmt_ref(c, v, false, &refs);
			memset(mask + in->disp_off, 1, 4);
		}
	}
	if (!in->rel && in->imm_size >= 4) {
		v = (uint64_t)field_sext(p + in->imm_off, in->imm_size);
		if (in_image(c->img, v)) {
			sb_puts(&refs, in->moffs_off ? " moffs:" : " $");
			fmt_ref(c, v, false, &refs);
			memset(mask + in->imm_off, 1, in->imm_size);
		}
	}
	for (k = 0; k < in->len; k++) {
		if (mask[k])
			sb_puts(out, "xx");
		else
			sb_printf(out, "%02x", p[k]);
	}
	sb_puts(out, sb_str(&refs));
	free(refs.p);
	return in->len;
}

/* ------------------------------------------------------------------ */
/* Functions: parts, listings, patch-site records                     */
/* ------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct strv {
	char **v;
	size_t n, cap;
};

static void strv_add(struct strv *sv, char *s)
{
	if (sv->n == sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
}

static void strv_free(struct strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

static char *sb_take(struct sbuf *sb)
{
	char *s = xstrdup(sb_str(sb));

	sb_reset(sb);
	return s;
}

/* The record of patch site idx of kind k, relative to the part. */
static void fmt_site(struct norm *c, enum site_kind k, size_t idx,
		     struct sbuf *out)
{
	const struct image *img = c->img;
	const struct table *t = &img->tables[k];
	const uint8_t *e = tab_ent(t, idx);
	uint64_t at = site_addr(img, k, idx), v;

	sb_printf(out, "%s +0x%04" PRIx64, site_names[k], at - c->ps);
	switch (k) {
	case S_ALT: {
		uint64_t repl = tab_rel(t, idx, 4);
		unsigned int fflags = t->esize == 12 ? le16(e + 8) : le32(e + 8);
		unsigned int ilen = e[t->esize - 2], rlen = e[t->esize - 1];
		const uint8_t *rp = rlen ? ptr_at(img, repl, rlen) : NULL;
		struct norm sub = *c;
		uint64_t o = 0;

		sb_printf(out, " feature=%#x len=%u/%u repl{", fflags, ilen, rlen);
		if (rlen && !rp)
			sb_puts(out, "outside-image");
		sub.rs = repl;
		sub.re = repl + rlen;
		sub.listing = false;
		while (rp && o < rlen) {
			struct insn in;
			size_t n = norm_insn(&sub, rp + o, rlen - o, repl + o, out, &in);

			if (!n) {
				for (; o < rlen; o++)
					sb_printf(out, "%02x", rp[o]);
				break;
			}
			sb_puts(out, ";");
			o += n;
		}
		sb_puts(out, "}");
		c->disagree += sub.disagree;
		break;
	}
	case S_PARA:
		sb_printf(out, " type=%u len=%u", e[8], e[9]);
		break;
	case S_JUMP:
		v = tab_rel(t, idx, 4);
		sb_puts(out, " target=");
		fmt_ref(c, v, false, out);
		v = t->start + idx * t->esize + 8 + (le64(e + 8) & ~3ull);
		sb_puts(out, " key=");
		fmt_ref(c, v, false, out);
		sb_printf(out, " flags=%u", (unsigned int)(le64(e + 8) & 3));
		break;
	case S_SCALL:
		v = t->start + idx * t->esize + 4 +
		    (uint64_t)((int64_t)(int32_t)le32(e + 4) & ~3ll);
		sb_puts(out, " key=");
		fmt_ref(c, v, false, out);
		sb_printf(out, " flags=%u", le32(e + 4) & 3);
		break;
	case S_EX:
		sb_puts(out, " fixup=");
		fmt_ref(c, tab_rel(t, idx, 4), false, out);
		sb_printf(out, " data=%#x", le32(e + 8));
		break;
	case S_BUG:
		sb_printf(out, " flags=%#x", le16(e + 10));
		break;
	default:
		break;
	}
}

struct part {
	size_t sym;		/* index into img->syms */
	char *label;		/* symbol name, ",N" when the name repeats */
	uint64_t size;		/* without trailing padding */
	char hash[HASH_HEX + 1];
};

/*
 * Normalise one part [start, end): its listing (the __fentry__ call and
 * trailing padding masked) then its patch-site records, sorted.  Hash it;
 * with listing, print it.
 */
static void norm_part(struct norm *c, struct part *pt, uint64_t start,
		      uint64_t end, bool main_part, FILE *listing)
{
	const struct image *img = c->img;
	const uint8_t *d = ptr_at(img, start, end - start);
	struct sbuf line = { 0 };
	struct strv lines = { 0 }, recs = { 0 };
	uint64_t off = 0, keep = 0, fentry_at = 0;
	size_t keep_lines = 0, i, lo, hi;
	struct sha256 sh;

	if (!d)
		fatal("%s: %s lies outside the image's file contents", img->path,
		      pt->label);
	c->ps = start;
	c->pe = end;
	/* endbr64 (IBT), then the __fentry__ call or its 5-byte nop */
	if (main_part && end - start >= 4 && memcmp(d, "\xf3\x0f\x1e\xfa", 4) == 0)
		fentry_at = 4;
	while (off < end - start) {
		struct insn in;
		size_t n;

		sb_reset(&line);
		sb_printf(&line, "%04" PRIx64 " ", off);
		if (main_part && off == fentry_at && end - start - off >= 5 &&
		    x86_decode(d + off, end - start - off, &in) && in.len == 5 &&
		    ((d[off] == 0xe8 &&
		      sym_by_name(img, "__fentry__") &&
		      start + off + 5 + (int64_t)(int32_t)le32(d + off + 1) ==
		      sym_by_name(img, "__fentry__")->addr) ||
		     memcmp(d + off, "\x0f\x1f\x44\x00\x00", 5) == 0)) {
			sb_puts(&line, "FENTRY");
			n = 5;
			if (c->check && HAVE_DIS && dis_insn(d + off, 5, start + off) != 5)
				c->disagree++;
		} else {
			n = norm_insn(c, d + off, end - start - off, start + off,
				      &line, &in);
		}
		if (!n) {
			/* not code: keep the rest as raw bytes */
			warn("%s: %s+%#" PRIx64 " does not decode; hashing the rest raw",
			     img->path, pt->label, off);
			for (; off < end - start; off++)
				sb_printf(&line, "%02x", d[off]);
			strv_add(&lines, sb_take(&line));
			keep = off;
			keep_lines = lines.n;
			break;
		}
		if (listing && HAVE_DIS) {
			dis_insn(d + off, end - start - off, start + off);
#ifdef KFP_OPCODES
			sb_printf(&line, "\t| %s", dis_get()->text);
#endif
		}
		strv_add(&lines, sb_take(&line));
		off += n;
		if (!is_padding(d + off - n, &in)) {
			keep = off;
			keep_lines = lines.n;
		}
	}
	pt->size = keep;

	/* the patch sites inside the part (padding included) */
	lo = 0;
	hi = img->nsites;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (img->sites[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < img->nsites && img->sites[i].addr < end; i++) {
		sb_reset(&line);
		fmt_site(c, img->sites[i].kind, img->sites[i].idx, &line);
		strv_add(&recs, sb_take(&line));
	}
	qsort(recs.v, recs.n, sizeof(*recs.v), cmp_str);

	sha256_init(&sh);
	for (i = 0; i < keep_lines; i++) {
		/* the libopcodes text is commentary, not hashed */
		char *bar = strstr(lines.v[i], "\t| ");
		size_t n = bar ? (size_t)(bar - lines.v[i]) : strlen(lines.v[i]);

		sha256_update(&sh, lines.v[i], n);
		sha256_update(&sh, "\n", 1);
	}
	for (i = 0; i < recs.n; i++) {
		sha256_update(&sh, recs.v[i], strlen(recs.v[i]));
		sha256_update(&sh, "\n", 1);
	}
	sha256_hex(&sh, pt->hash);
	if (listing) {
		fprintf(listing, "part %s %#" PRIx64 " size %" PRIu64 " (extent %" PRIu64 ") hash %s\n",
			pt->label, start, pt->size, end - start, pt->hash);
		for (i = 0; i < lines.n; i++)
			fprintf(listing, "  %s%s\n", lines.v[i],
				i >= keep_lines ? "   (padding)" : "");
		for (i = 0; i < recs.n; i++)
			fprintf(listing, "  site %s\n", recs.v[i]);
	}
	strv_free(&lines);
	strv_free(&recs);
	free(line.p);
}

/* GCC's clone suffixes: .isra.N .constprop.N .part.N .cold and chains. */
static bool clone_suffix(const char *s)
{
	bool word = false;

	while (*s == '.') {
		const char *t = ++s;
		size_t n = strcspn(t, ".");

		if ((n == 4 && !strncmp(t, "isra", 4)) ||
		    (n == 9 && !strncmp(t, "constprop", 9)) ||
		    (n == 4 && !strncmp(t, "part", 4)) ||
		    (n == 4 && !strncmp(t, "cold", 4)))
			word = true;
		else if (!n || strspn(t, "0123456789") != n || !word)
			return false;
		s = t + n;
	}
	return !*s && word;
}

struct item {
	char kind;		/* 'f' func, 'd' data, 'a' absent */
	const char *name;
	uint64_t size;
	char hash[HASH_HEX + 1];
	struct part *parts;
	size_t nparts;
};

static int cmp_part(const void *a, const void *b)
{
	return strcmp(((const struct part *)a)->label,
		      ((const struct part *)b)->label);
}

/* Hash a data symbol's initial value, pointers into the image by name. */
static void hash_data(struct norm *c, const struct symbol *s, uint64_t size,
		      char *hash)
{
	const struct image *img = c->img;
	const struct section *sec = sec_of(img, s->addr);
	const uint8_t *d;
	struct sbuf sb = { 0 };
	uint64_t i, n = size < DATA_HASH_MAX ? size : DATA_HASH_MAX;

	if (s->addr < img->lo && img->percpu && s->addr + size <= img->percpu->size) {
		sec = img->percpu;
		d = sec->data ? sec->data + s->addr : NULL;
	} else {
		d = ptr_at(img, s->addr, n);
	}
	if (!sec || !d) {
		snprintf(hash, HASH_HEX + 1, "bss");
		return;
	}
	c->ps = c->pe = 0;
	for (i = 0; i < n;) {
		if ((s->addr + i) % 8 == 0 && n - i >= 8 &&
		    in_image(img, le64(d + i))) {
			sb_puts(&sb, "[");
			fmt_ref(c, le64(d + i), false, &sb);
			sb_puts(&sb, "]");
			i += 8;
		} else {
			sb_printf(&sb, "%02x", d[i++]);
		}
	}
	hash_str(sb_str(&sb), sb.len, hash);
	free(sb.p);
}

static void build_item(struct norm *c, struct item *it, const char *name,
		       FILE *listing)
{
	const struct image *img = c->img;
	size_t k, j, nlen = strlen(name), nexec = 0, ndata = 0;
	uint32_t *idx = NULL;
	size_t nidx = 0;
	struct sha256 sh;

	it->name = name;
	for (k = name_lower(img, name); k < img->nsyms; k++) {
		const struct symbol *s = &img->syms[img->by_name[k]];

		if (strncmp(s->name, name, nlen))
			break;
		if (s->name[nlen] && !clone_suffix(s->name + nlen))
			continue;
		idx = xrealloc(idx, (nidx + 1) * sizeof(*idx));
		idx[nidx++] = img->by_name[k];
		if (sec_exec(sec_of(img, s->addr)))
			nexec++;
		else if (!s->name[nlen])
			ndata++;
	}
	if (!nexec && !ndata) {
		it->kind = 'a';
		free(idx);
		return;
	}
	if (!nexec) {
		/* data: size to the next symbol; initial value hashed */
		char h[HASH_HEX + 1];

		it->kind = 'd';
		sha256_init(&sh);
		for (j = 0; j < nidx; j++) {
			const struct symbol *s = &img->syms[idx[j]];
			uint64_t size = sym_end(img, idx[j]) - s->addr;

			if (j == 0)
				it->size = size;
			hash_data(c, s, size, h);
			if (nidx == 1)
				memcpy(it->hash, h, sizeof(it->hash));
			sha256_update(&sh, h, strlen(h));
			sha256_update(&sh, "\n", 1);
		}
		if (nidx > 1)
			sha256_hex(&sh, it->hash);	/* several of this name */
		free(idx);
		return;
	}
	it->kind = 'f';
	it->parts = xcalloc(nexec, sizeof(*it->parts));
	for (j = 0; j < nidx; j++) {
		const struct symbol *s = &img->syms[idx[j]];
		struct part *pt;
		size_t same = 0, pos = 0, q;

		if (!sec_exec(sec_of(img, s->addr)))
			continue;
		/* sympos: the position among symbols of this name, by address */
		for (q = 0; q < nidx; q++) {
			if (strcmp(img->syms[idx[q]].name, s->name) == 0) {
				same++;
				if (idx[q] <= idx[j])
					pos++;
			}
		}
		pt = &it->parts[it->nparts++];
		pt->sym = idx[j];
		if (same > 1) {
			pt->label = xmalloc(strlen(s->name) + 24);
			sprintf(pt->label, "%s,%zu", s->name, pos);
		} else {
			pt->label = xstrdup(s->name);
		}
	}
	qsort(it->parts, it->nparts, sizeof(*it->parts), cmp_part);
	sha256_init(&sh);
	for (j = 0; j < it->nparts; j++) {
		struct part *pt = &it->parts[j];
		const struct symbol *s = &img->syms[pt->sym];
		char line[KSYM_MAX + 64];

		norm_part(c, pt, s->addr, sym_end(img, pt->sym),
			  strcmp(s->name, name) == 0, listing);
		it->size += pt->size;
		snprintf(line, sizeof(line), "%s %" PRIu64 " %s\n", pt->label,
			 pt->size, pt->hash);
		sha256_update(&sh, line, strlen(line));
	}
	sha256_hex(&sh, it->hash);
	free(idx);
}

/* ------------------------------------------------------------------ */
/* Structures from BTF                                                */
/* ------------------------------------------------------------------ */

static void type_desc(const struct btf *btf, uint32_t id, int depth,
		      bool shallow, struct sbuf *out);

static const char *tname(const struct btf *btf, const struct btf_type *t)
{
	const char *n = btf__name_by_offset(btf, t->name_off);

	return n ? n : "";
}

static void members_desc(const struct btf *btf, const struct btf_type *t,
			 int depth, struct sbuf *out)
{
	const struct btf_member *m = btf_members(t);
	unsigned int i, n = btf_vlen(t);

	for (i = 0; i < n; i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);

		sb_printf(out, "%s%s@%u:%u ", i ? "; " : "", mn && *mn ? mn : "-",
			  btf_member_bit_offset(t, i), btf_member_bitfield_size(t, i));
		type_desc(btf, m->type, depth + 1, false, out);
	}
}

/*
 * A member's type: names and sizes; anonymous structs and unions in full
 * (their members are the outer struct's layout); through pointers only
 * the name of what is pointed to.
 */
static void type_desc(const struct btf *btf, uint32_t id, int depth,
		      bool shallow, struct sbuf *out)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	long long size;

	if (id == 0 || !t) {
		sb_puts(out, "void");
		return;
	}
	if (depth > 16) {
		sb_puts(out, "...");
		return;
	}
	size = btf__resolve_size(btf, id);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
		sb_printf(out, "%s/%lld", tname(btf, t), size);
		break;
	case BTF_KIND_PTR:
		sb_puts(out, "*");
		type_desc(btf, t->type, depth + 1, true, out);
		break;
	case BTF_KIND_ARRAY:
		sb_printf(out, "[%u]", btf_array(t)->nelems);
		type_desc(btf, btf_array(t)->type, depth + 1, shallow, out);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		sb_puts(out, btf_kind(t) == BTF_KIND_STRUCT ? "struct " : "union ");
		if (*tname(btf, t) && shallow) {
			sb_puts(out, tname(btf, t));	/* behind a pointer */
		} else if (*tname(btf, t)) {
			sb_printf(out, "%s/%lld", tname(btf, t), size);
		} else if (shallow) {
			sb_printf(out, "{anon}/%lld", size);
		} else {
			sb_printf(out, "{/%lld ", size);
			members_desc(btf, t, depth, out);
			sb_puts(out, "}");
		}
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		sb_printf(out, "enum %s/%lld", tname(btf, t), size);
		break;
	case BTF_KIND_FWD:
		sb_printf(out, "fwd %s", tname(btf, t));
		break;
	case BTF_KIND_TYPEDEF:
		sb_printf(out, "typedef %s/%lld", tname(btf, t), size);
		break;
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		sb_puts(out, btf_kind(t) == BTF_KIND_VOLATILE ? "volatile " :
			     btf_kind(t) == BTF_KIND_CONST ? "const " :
			     btf_kind(t) == BTF_KIND_RESTRICT ? "restrict " : "tag ");
		type_desc(btf, t->type, depth + 1, shallow, out);
		break;
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *pa = btf_params(t);
		unsigned int i;

		sb_puts(out, "fn(");
		for (i = 0; i < btf_vlen(t); i++) {
			if (i)
				sb_puts(out, ",");
			type_desc(btf, pa[i].type, depth + 1, true, out);
		}
		sb_puts(out, ")->");
		type_desc(btf, t->type, depth + 1, true, out);
		break;
	}
	default:
		sb_printf(out, "kind%u", btf_kind(t));
	}
}

struct sitem {
	const char *name;
	uint64_t size;
	char hash[HASH_HEX + 1];
	unsigned int ntypes;	/* BTF types of this name (0: absent) */
};

static int silence_libbpf(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void build_structs(const struct image *img, struct sitem *st,
			  size_t n, FILE *listing)
{
	const struct section *s = sec_by_name(img, ".BTF");
	struct btf *btf;
	uint32_t id, cnt;
	struct strv *descs = xcalloc(n, sizeof(*descs));
	const char **names = xcalloc(n, sizeof(*names));
	struct sbuf sb = { 0 };
	size_t i;

	if (!s || !s->data)
		fatal("%s: no .BTF section (CONFIG_DEBUG_INFO_BTF off?)", img->path);
	libbpf_set_print(silence_libbpf);
	btf = btf__new(s->data, (uint32_t)s->size);
	if (libbpf_get_error(btf))
		fatal("%s: .BTF section does not parse (%s)", img->path,
		      strerror((int)-libbpf_get_error(btf)));
	for (i = 0; i < n; i++)
		names[i] = st[i].name;
	cnt = btf__type_cnt(btf);
	for (id = 1; id < cnt; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *nm, **hit;

		if (!btf_is_struct(t) && !btf_is_union(t))
			continue;
		nm = tname(btf, t);
		if (!*nm)
			continue;
		hit = bsearch(&nm, names, n, sizeof(*names), cmp_cstr);
		if (!hit)
			continue;
		i = (size_t)(hit - names);
		sb_reset(&sb);
		sb_printf(&sb, "%s %s/%u {", btf_is_struct(t) ? "struct" : "union",
			  nm, t->size);
		members_desc(btf, t, 0, &sb);
		sb_puts(&sb, "}");
		if (!st[i].ntypes++)
			st[i].size = t->size;
		strv_add(&descs[i], sb_take(&sb));
	}
	for (i = 0; i < n; i++) {
		struct sha256 sh;
		size_t j;

		if (!st[i].ntypes)
			continue;
		/* duplicates (BTF dedup keeps differing definitions): all, sorted */
		qsort(descs[i].v, descs[i].n, sizeof(char *), cmp_str);
		sha256_init(&sh);
		for (j = 0; j < descs[i].n; j++) {
			sha256_update(&sh, descs[i].v[j], strlen(descs[i].v[j]));
			sha256_update(&sh, "\n", 1);
			if (listing)
				fprintf(listing, "%s\n", descs[i].v[j]);
		}
		sha256_hex(&sh, st[i].hash);
		if (st[i].ntypes > 1)
			warn("%s: BTF has %u types named %s", img->path,
			     st[i].ntypes, st[i].name);
		strv_free(&descs[i]);
	}
	free(descs);
	free(names);
	free(sb.p);
	btf__free(btf);
}

/* ------------------------------------------------------------------ */
/* Loading an image                                                   */
/* ------------------------------------------------------------------ */

static void load_image(struct image *img, const char *path)
{
	double t0 = now();

	memset(img, 0, sizeof(*img));
	img->path = path;
	unpack_image(img);
	load_elf(img);
	img->t_unpack = now() - t0;
	t0 = now();
	load_kallsyms(img);
	img->t_kallsyms = now() - t0;
	load_banner(img);
	find_build_id(img);
	load_sites(img);
	init_decoder();
}

/* Check the decoded symbols; returns the number of problems. */
static size_t validate_symbols(const struct image *img, bool verbose)
{
	uint64_t stored = le32(ptr_at(img, img->ks.num_syms, 4));
	size_t i, bad = 0, unsorted = 0, gaps = 0, named = 0;
	const struct {
		const char *name;
		uint64_t addr;
	} tabs[] = {
		{ "kallsyms_num_syms", img->ks.num_syms },
		{ "kallsyms_names", img->ks.names },
		{ "kallsyms_markers", img->ks.markers },
		{ "kallsyms_token_table", img->ks.token_table },
		{ "kallsyms_token_index", img->ks.token_index },
		{ "kallsyms_offsets", img->ks.offsets },
		{ "kallsyms_relative_base", img->ks.relative_base },
		{ "kallsyms_seqs_of_names", img->ks.seqs },
	};

	if (stored != img->nsyms) {
		warn("%s: decoded %zu symbols, kallsyms_num_syms says %" PRIu64,
		     img->path, img->nsyms, stored);
		bad++;
	}
	for (i = 0; i < img->nsyms; i++) {
		const struct symbol *s = &img->syms[i];
		const char *c;

		if (i && s->addr < img->syms[i - 1].addr)
			unsorted++;
		if (!addr_ok(img, s->addr)) {
			if (bad++ < 5)
				warn("%s: symbol %s at %#" PRIx64 " is outside the image",
				     img->path, s->name, s->addr);
		} else if (!addr_in_section(img, s->addr)) {
			if (verbose && gaps < 5)
				fprintf(stderr, "%s: note: %s at %#" PRIx64 " lies between sections\n",
					prog, s->name, s->addr);
			gaps++;
		}
		for (c = s->name; *c; c++)
			if (!ksym_char((uint8_t)*c))
				break;
		if (*c || !*s->name || !isalpha((unsigned char)s->type)) {
			if (bad++ < 5)
				warn("%s: symbol %zu has a malformed name", img->path, i);
		}
	}
	if (unsorted) {
		warn("%s: %zu symbols out of address order", img->path, unsorted);
		bad++;
	}
	/* 6.1+ sorts a copy by name: its order checks every decoded name */
	if (!img->ks.seqs && (img->ver_major > 6 ||
			      (img->ver_major == 6 && img->ver_minor >= 1))) {
		warn("%s: kallsyms_seqs_of_names missing or inconsistent with the decoded names",
		     img->path);
		bad++;
	}
	/* where the image names its own tables, they must be where found */
	for (i = 0; i < ARRAY_SIZE(tabs); i++) {
		const struct symbol *t = sym_by_name(img, tabs[i].name);

		if (t && tabs[i].addr && t->addr != tabs[i].addr) {
			warn("%s: symbol %s is at %#" PRIx64 ", the table was found at %#" PRIx64,
			     img->path, tabs[i].name, t->addr, tabs[i].addr);
			bad++;
		} else if (t) {
			named++;
		}
	}
	if (verbose) {
		fprintf(stderr, "%s: %zu symbols (kallsyms_num_syms %" PRIu64 "), %s offsets, %zu between sections\n",
			prog, img->nsyms, stored, img->ks.mode, gaps);
		fprintf(stderr, "%s: kallsyms_num_syms %#" PRIx64 " names %#" PRIx64
			" markers %#" PRIx64 " token_table %#" PRIx64 " token_index %#" PRIx64
			" offsets %#" PRIx64 " relative_base %#" PRIx64 " seqs_of_names %#" PRIx64 "%s\n",
			prog, img->ks.num_syms, img->ks.names, img->ks.markers,
			img->ks.token_table, img->ks.token_index, img->ks.offsets,
			img->ks.relative_base, img->ks.seqs,
			img->ks.seqs ? " (names in its order are sorted)" : " (absent)");
		fprintf(stderr, "%s: %zu of these tables are named in the symbols, at the same addresses\n",
			prog, named);
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* Lists and configs                                                  */
/* ------------------------------------------------------------------ */

static bool valid_name(const char *s)
{
	if (!*s || strlen(s) >= KSYM_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '$')
			return false;
	return true;
}

/* A part's label: a symbol name, ",N" (its sympos) when the name repeats. */
static bool valid_label(const char *s)
{
	const char *comma = strchr(s, ',');
	char *name;
	bool ok;

	if (!comma)
		return valid_name(s);
	name = xstrndup(s, (size_t)(comma - s));
	ok = valid_name(name) && comma[1] && comma[1] != '0' &&
	     strspn(comma + 1, "0123456789") == strlen(comma + 1) &&
	     strlen(comma + 1) < 6;
	free(name);
	return ok;
}

/*
 * A name list: one name a line ("#" comments, blanks ignored); lines of
 * mirror-diff.sh's "KIND NAME FILE" are accepted too (kinds decl and
 * const skipped).  Sorted, duplicates dropped.
 */
static char **read_list(const char *path, size_t *count)
{
	size_t size, n = 0, lineno = 0, i, o;
	uint8_t *buf = read_file(path, &size);
	char *p = (char *)buf, *line, **v = NULL;

	buf = xrealloc(buf, size + 1);
	p = (char *)buf;
	p[size] = '\0';
	if (memchr(buf, '\0', size))
		fatal("%s: binary data in a name list", path);
	while ((line = strsep(&p, "\n"))) {
		char *f[4] = { 0 }, *save = NULL, *tok, *name;
		int nf = 0;

		lineno++;
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		for (tok = strtok_r(line, " \t\r", &save); tok && nf < 4;
		     tok = strtok_r(NULL, " \t\r", &save))
			f[nf++] = tok;
		if (!nf)
			continue;
		name = f[0];
		if (nf > 1) {
			if (!strcmp(f[0], "decl") || !strcmp(f[0], "const"))
				continue;
			if (strcmp(f[0], "mirror") && strcmp(f[0], "replaced") &&
			    strcmp(f[0], "called") && strcmp(f[0], "relied"))
				fatal("%s:%zu: expected NAME or \"KIND NAME [FILE]\"",
				      path, lineno);
			name = f[1];
		}
		if (!valid_name(name))
			fatal("%s:%zu: not a symbol name: %s", path, lineno, name);
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xstrdup(name);
	}
	free(buf);
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0, o = 0; i < n; i++) {
		if (o && !strcmp(v[o - 1], v[i]))
			free(v[i]);
		else
			v[o++] = v[i];
	}
	if (!o)
		fatal("%s: empty name list", path);
	*count = o;
	return v;
}

/* A kernel config: its compiler, a digest of all its option lines, the lines. */
struct kconfig {
	char *cc;			/* CONFIG_CC_VERSION_TEXT */
	char digest[HASH_HEX + 1];	/* informational: differs between any two builds */
	struct strv lines;		/* "CONFIG_X=v" and "# CONFIG_X is not set" */
};

static void read_config(const char *path, struct kconfig *cfg)
{
	size_t size;
	uint8_t *buf = read_file(path, &size);
	char *p, *line;
	struct sha256 sh;

	buf = xrealloc(buf, size + 1);
	buf[size] = '\0';
	if (memchr(buf, '\0', size))
		fatal("%s: binary data, not a kernel config", path);
	p = (char *)buf;
	memset(cfg, 0, sizeof(*cfg));
	sha256_init(&sh);
	while ((line = strsep(&p, "\n"))) {
		if (!strncmp(line, "CONFIG_", 7) ||
		    (!strncmp(line, "# CONFIG_", 9) && strstr(line, " is not set"))) {
			sha256_update(&sh, line, strlen(line));
			sha256_update(&sh, "\n", 1);
			strv_add(&cfg->lines, xstrdup(line));
		}
		if (!strncmp(line, "CONFIG_CC_VERSION_TEXT=\"", 24) && !cfg->cc) {
			char *e = strrchr(line + 24, '"');

			if (e)
				cfg->cc = xstrndup(line + 24, (size_t)(e - line - 24));
		}
	}
	if (!cfg->lines.n || !cfg->cc)
		fatal("%s: not a kernel config (no CONFIG_CC_VERSION_TEXT)", path);
	sha256_hex(&sh, cfg->digest);
	free(buf);
}

/*
 * The value of option @name (CONFIG_X) in @cfg as one field of an option
 * record: the text after '=' when it is one printable word, else "h:" and
 * its hash; "n" for "is not set"; "absent" when the config lacks it.
 */
static void config_value(const struct kconfig *cfg, const char *name,
			 char *out, size_t len)
{
	size_t i, n = strlen(name);

	for (i = 0; i < cfg->lines.n; i++) {
		const char *l = cfg->lines.v[i], *v;
		bool word = true;

		if (l[0] == '#') {
			if (!strncmp(l + 2, name, n) && l[2 + n] == ' ') {
				snprintf(out, len, "n");
				return;
			}
			continue;
		}
		if (strncmp(l, name, n) || l[n] != '=')
			continue;
		for (v = l + n + 1; *v; v++)
			word &= isgraph((unsigned char)*v) != 0;
		v = l + n + 1;
		if (word && *v && strlen(v) < len) {
			snprintf(out, len, "%s", v);
		} else {
			char h[HASH_HEX + 1];

			hash_str(v, strlen(v), h);
			snprintf(out, len, "h:%s", h);
		}
		return;
	}
	snprintf(out, len, "absent");
}

/* An option list's names as CONFIG_X (the list may leave the prefix out). */
static char **read_options(const char *path, size_t *count)
{
	char **v = read_list(path, count);
	size_t i;

	for (i = 0; i < *count; i++) {
		if (strncmp(v[i], "CONFIG_", 7)) {
			char *full = xmalloc(strlen(v[i]) + 8);

			sprintf(full, "CONFIG_%s", v[i]);
			free(v[i]);
			v[i] = full;
		}
	}
	qsort(v, *count, sizeof(*v), cmp_str);
	return v;
}

/* ------------------------------------------------------------------ */
/* Commands                                                           */
/* ------------------------------------------------------------------ */

static void finish_stdout(void)
{
	if (fflush(stdout) || ferror(stdout))
		fatal("write error on standard output: %s", strerror(errno));
}

static int cmd_symbols(int argc, char **argv)
{
	struct image img;
	size_t i, bad;

	if (argc != 1)
		fatal("usage: kfp symbols IMAGE");
	load_image(&img, argv[0]);
	bad = validate_symbols(&img, true);
	if (bad)
		fatal("%s: kallsyms parse failed validation (%zu problems)",
		      img.path, bad);
	for (i = 0; i < img.nsyms; i++)
		printf("%016" PRIx64 " %c %s\n", img.syms[i].addr,
		       img.syms[i].type, img.syms[i].name);
	finish_stdout();
	return 0;
}

/* What a fingerprint covers: the names of its items. */
struct fp_lists {
	char **funcs;		/* functions and data */
	size_t nfuncs;
	char **structs;
	size_t nstructs;
	char **options;		/* CONFIG_X; only with a config */
	size_t noptions;
};

/*
 * The fingerprint file, one record a line, fields separated by one space:
 *   kfp-fingerprint 2
 *   release R | version V... | toolchain T... | build-id HEX|none
 *   banner B... | symbols N | sites KIND,... (informational)
 *   config-cc T... | config HASH          (with --config; the digest of all
 *                                          option lines is informational)
 *   func NAME SIZE HASH NPARTS            then NPARTS lines
 *   part NAME LABEL SIZE HASH             (LABEL: symbol[,sympos])
 *   data NAME SIZE HASH                   (HASH "bss" for no contents)
 *   absent NAME
 *   struct NAME SIZE HASH NTYPES
 *   absent-struct NAME
 *   option CONFIG_X VALUE                 (with --config: config_value())
 *   end NITEMS                            (every line but header and part)
 * SIZE: bytes of code without padding (func), to the next symbol (data),
 * sizeof (struct); HASH: first 128 bits of SHA-256, hex.
 */
static void emit_fingerprint(FILE *f, struct image *img,
			     const struct fp_lists *l, const struct kconfig *cfg)
{
	struct norm c = { 0 };
	struct item *items;
	struct sitem *st;
	size_t i, j, nitems = 0;
	char val[128];

	c.img = img;
	c.check = true;
	items = xcalloc(l->nfuncs, sizeof(*items));
	for (i = 0; i < l->nfuncs; i++)
		build_item(&c, &items[i], l->funcs[i], NULL);
	if (c.disagree)
		fatal("%s: own x86 decoder and libopcodes disagree on %lu instruction lengths",
		      img->path, c.disagree);
	st = xcalloc(l->nstructs, sizeof(*st));
	for (i = 0; i < l->nstructs; i++)
		st[i].name = l->structs[i];
	build_structs(img, st, l->nstructs, NULL);

	fprintf(f, "%s\n", FP_MAGIC);
	fprintf(f, "release %s\n", img->release);
	fprintf(f, "version %s\n", img->version);
	fprintf(f, "toolchain %s\n", img->toolchain);
	fprintf(f, "build-id %s\n", img->build_id);
	fprintf(f, "banner %s\n", img->banner);
	fprintf(f, "symbols %zu\n", img->nsyms);
	fprintf(f, "sites %s\n", img->tables_found[0] ? img->tables_found : "none");
	if (cfg) {
		fprintf(f, "config-cc %s\n", cfg->cc);
		fprintf(f, "config %s\n", cfg->digest);
	}
	for (i = 0; i < l->nfuncs; i++) {
		struct item *it = &items[i];

		nitems++;
		if (it->kind == 'a') {
			fprintf(f, "absent %s\n", it->name);
		} else if (it->kind == 'd') {
			fprintf(f, "data %s %" PRIu64 " %s\n", it->name, it->size,
				it->hash);
		} else {
			fprintf(f, "func %s %" PRIu64 " %s %zu\n", it->name, it->size,
				it->hash, it->nparts);
			for (j = 0; j < it->nparts; j++)
				fprintf(f, "part %s %s %" PRIu64 " %s\n", it->name,
					it->parts[j].label, it->parts[j].size,
					it->parts[j].hash);
		}
	}
	for (i = 0; i < l->nstructs; i++) {
		nitems++;
		if (!st[i].ntypes)
			fprintf(f, "absent-struct %s\n", st[i].name);
		else
			fprintf(f, "struct %s %" PRIu64 " %s %u\n", st[i].name,
				st[i].size, st[i].hash, st[i].ntypes);
	}
	for (i = 0; cfg && i < l->noptions; i++) {
		nitems++;
		config_value(cfg, l->options[i], val, sizeof(val));
		fprintf(f, "option %s %s\n", l->options[i], val);
	}
	fprintf(f, "end %zu\n", nitems);
	free(items);	/* (the parts stay: freed at exit) */
	free(st);
}

/* The image, its symbols checked, and its compiler against the config's. */
static void open_image(struct image *img, const char *path,
		       const struct kconfig *cfg, const char *cfg_path)
{
	load_image(img, path);
	if (validate_symbols(img, false))
		fatal("%s: kallsyms parse failed validation", img->path);
	if (cfg && !strstr(img->toolchain, cfg->cc))
		fatal("%s: CONFIG_CC_VERSION_TEXT \"%s\" is not the compiler of %s (%s)",
		      cfg_path, cfg->cc, path, img->toolchain);
}

/* Write to @out whole or not at all (a device or pipe: in place). */
static FILE *open_output(const char *out, char **tmp)
{
	struct stat st;
	FILE *f;
	int fd;

	*tmp = NULL;
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		f = fopen(out, "w");
		if (!f)
			fatal("%s: cannot open: %s", out, strerror(errno));
		return f;
	}
	*tmp = xmalloc(strlen(out) + 16);
	sprintf(*tmp, "%s.kfp-XXXXXX", out);
	fd = mkstemp(*tmp);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f)
		fatal("%s: cannot create: %s", *tmp, strerror(errno));
	if (fchmod(fd, 0644))
		fatal("%s: cannot chmod: %s", *tmp, strerror(errno));
	return f;
}

static void close_output(FILE *f, const char *out, char *tmp)
{
	if (f == stdout) {
		finish_stdout();
		return;
	}
	if (fflush(f) || ferror(f) || fclose(f)) {
		if (tmp)
			unlink(tmp);
		fatal("%s: write error: %s", tmp ? tmp : out, strerror(errno));
	}
	if (tmp && rename(tmp, out)) {
		unlink(tmp);
		fatal("%s: cannot rename to %s: %s", tmp, out, strerror(errno));
	}
	free(tmp);
}

static int cmd_fingerprint(int argc, char **argv)
{
	const char *image = NULL, *funcs = NULL, *structs = NULL, *out = NULL;
	const char *config = NULL, *options = NULL;
	struct fp_lists l = { 0 };
	struct kconfig cfg;
	struct image img;
	char *tmp = NULL;
	FILE *f = stdout;
	double t0 = now();
	size_t i;

	for (i = 0; i < (size_t)argc; i++) {
		const char **dst = NULL;

		if (!strcmp(argv[i], "--functions"))
			dst = &funcs;
		else if (!strcmp(argv[i], "--structs"))
			dst = &structs;
		else if (!strcmp(argv[i], "--config"))
			dst = &config;
		else if (!strcmp(argv[i], "--options"))
			dst = &options;
		else if (!strcmp(argv[i], "-o"))
			dst = &out;
		else if (argv[i][0] == '-' || image)
			fatal("fingerprint: unexpected argument %s", argv[i]);
		else
			image = argv[i];
		if (dst) {
			if (++i >= (size_t)argc)
				fatal("fingerprint: %s needs a value", argv[i - 1]);
			*dst = argv[i];
		}
	}
	if (!image || !funcs || !structs || (options && !config))
		fatal("usage: kfp fingerprint IMAGE --functions FILE --structs FILE [--config FILE [--options FILE]] [-o OUT]");
	l.funcs = read_list(funcs, &l.nfuncs);
	l.structs = read_list(structs, &l.nstructs);
	if (options)
		l.options = read_options(options, &l.noptions);
	if (config)
		read_config(config, &cfg);
	open_image(&img, image, config ? &cfg : NULL, config);
	if (out)
		f = open_output(out, &tmp);
	emit_fingerprint(f, &img, &l, config ? &cfg : NULL);
	close_output(f, out, tmp);
	if (getenv("KFP_TIMING"))
		fprintf(stderr, "%s: %s: unpack+ELF %.2fs, kallsyms %.2fs, total %.2fs\n",
			prog, image, img.t_unpack, img.t_kallsyms, now() - t0);
	return 0;
}

static int cmd_disasm(int argc, char **argv)
{
	struct image img;
	struct norm c = { 0 };
	int i;

	if (argc < 2)
		fatal("usage: kfp disasm IMAGE NAME...");
	load_image(&img, argv[0]);
	c.img = &img;
	c.check = true;
	c.listing = true;
	for (i = 1; i < argc; i++) {
		struct item it = { 0 };
		struct sitem st = { argv[i], 0, "", 0 };

		if (!valid_name(argv[i]))
			fatal("not a symbol name: %s", argv[i]);
		build_item(&c, &it, argv[i], stdout);
		if (it.kind == 'a') {
			build_structs(&img, &st, 1, stdout);
			printf("%s %s\n", st.ntypes ? "struct" : "absent", argv[i]);
		} else if (it.kind == 'd') {
			printf("data %s %" PRIu64 " %s\n", argv[i], it.size, it.hash);
		} else {
			printf("func %s %" PRIu64 " %s\n", argv[i], it.size, it.hash);
		}
	}
	if (c.disagree)
		printf("decoder disagreements: %lu\n", c.disagree);
	finish_stdout();
	return 0;
}

/*
 * Decode every function of .text and compare each instruction length with
 * libopcodes: a test of the decoder on the real kernel.
 */
static int cmd_decoder_check(int argc, char **argv)
{
	struct image img;
	unsigned long insns = 0, funcs = 0, bad = 0, undecoded = 0, shown = 0;
	size_t i;

	if (argc != 1)
		fatal("usage: kfp decoder-check IMAGE");
	if (!HAVE_DIS)
		fatal("decoder-check needs a build with libopcodes (KFP_OPCODES=1)");
	load_image(&img, argv[0]);
	for (i = 0; i < img.nsyms; i++) {
		const struct symbol *s = &img.syms[i];
		const struct section *sec = sec_of(&img, s->addr);
		uint64_t end, off = 0;
		const uint8_t *d;

		if (!sec || strcmp(sec->name, ".text") || (s->type != 't' && s->type != 'T'))
			continue;
		if (!strncmp(s->name, "__pfx_", 6))
			continue;
		end = sym_end(&img, i);
		d = ptr_at(&img, s->addr, end - s->addr);
		if (!d)
			continue;
		funcs++;
		while (off < end - s->addr) {
			struct insn in;
			int olen;

			if (!x86_decode(d + off, end - s->addr - off, &in)) {
				if (undecoded++ < 10)
					printf("undecodable %s+%#" PRIx64 ": %02x %02x %02x (libopcodes: %d bytes)\n",
					       s->name, off, d[off],
					       off + 1 < end - s->addr ? d[off + 1] : 0,
					       off + 2 < end - s->addr ? d[off + 2] : 0,
					       dis_insn(d + off, end - s->addr - off,
							s->addr + off));
				break;
			}
			olen = dis_insn(d + off, end - s->addr - off, s->addr + off);
			insns++;
			if (olen != in.len) {
				bad++;
				if (shown++ < 10) {
					char hex[64] = "";
					int k;

					for (k = 0; k < 12 && off + k < end - s->addr; k++)
						sprintf(hex + 3 * k, "%02x ", d[off + k]);
					printf("mismatch %s+%#" PRIx64 ": own %u, libopcodes %d: %s\n",
					       s->name, off, in.len, olen, hex);
				}
				break;
			}
			off += in.len;
		}
	}
	printf("decoder-check: %lu functions, %lu instructions, %lu length mismatches, %lu functions with undecodable bytes\n",
	       funcs, insns, bad, undecoded);
	finish_stdout();
	return bad ? 1 : 0;
}

/* ---- compare ---- */

struct fp_item {
	char *key;		/* "sym NAME", "struct NAME", "option NAME" */
	char *line;		/* the item's line */
	char kind[16];
	char *name;
	struct strv parts;	/* its part lines */
	bool matched;
};

enum {
	H_RELEASE, H_VERSION, H_TOOLCHAIN, H_BUILD_ID, H_BANNER, H_SYMBOLS,
	H_SITES, H_CONFIG_CC, H_CONFIG, H_N,
};

static const char *const header_keys[H_N] = {
	"release", "version", "toolchain", "build-id", "banner", "symbols",
	"sites", "config-cc", "config",
};

struct fp {
	const char *path;
	char *hdr[H_N];
	char *toolchain, *config, *config_cc, *release, *version;
	struct fp_item *items;
	size_t n;
};

static int header_key(const char *k)
{
	int i;

	for (i = 0; i < H_N; i++)
		if (!strcmp(k, header_keys[i]))
			return i;
	return -1;
}

static bool is_hash(const char *s)
{
	size_t i;

	for (i = 0; i < HASH_HEX; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return s[HASH_HEX] == '\0';
}

static bool is_num(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 20;
}

static void __attribute__((noreturn)) bad_fp(const struct fp *fp, size_t lineno,
					     const char *why)
{
	fatal("%s:%zu: malformed fingerprint file: %s", fp->path, lineno, why);
}

/* Every header line cmd_fingerprint always writes; config-cc with config. */
static void check_header(const struct fp *fp, size_t lineno)
{
	char why[64];
	int i;

	for (i = 0; i < H_CONFIG_CC; i++) {
		if (!fp->hdr[i]) {
			snprintf(why, sizeof(why), "no %s line in the header",
				 header_keys[i]);
			bad_fp(fp, lineno, why);
		}
	}
	if (!fp->hdr[H_CONFIG_CC] != !fp->hdr[H_CONFIG])
		bad_fp(fp, lineno, "config-cc and config lines come together");
}

/* A magic line of another format version: say so, not just "not a fingerprint". */
static void check_magic(const char *path, const char *line)
{
	const char *v = line + strlen("kfp-fingerprint ");

	if (!strcmp(line, FP_MAGIC))
		return;
	if (!strncmp(line, "kfp-fingerprint ", 16) && is_num(v))
		fatal("%s: fingerprint format %s; this kfp reads format %d: regenerate the fingerprint with this kfp",
		      path, v, FP_FORMAT);
	fatal("%s: not a fingerprint file (first line is not \"%s\")", path,
	      FP_MAGIC);
}

/* Parse the fingerprint in @buf (@size bytes, taken over), named @path. */
static void parse_fp(struct fp *fp, const char *path, uint8_t *buf, size_t size)
{
	size_t lineno = 0, nitems = 0, pending = 0;
	char *p, *line;
	bool ended = false, magic = false;
	int hk;
	struct fp_item *cur = NULL;

	memset(fp, 0, sizeof(*fp));
	fp->path = path;
	if (size == 0)
		fatal("%s: empty file, not a fingerprint", path);
	if (memchr(buf, '\0', size))
		fatal("%s: binary data, not a fingerprint file", path);
	if (buf[size - 1] != '\n')
		fatal("%s: malformed fingerprint file: last line not terminated (truncated?)",
		      path);
	buf = xrealloc(buf, size + 1);
	buf[size - 1] = '\0';
	p = (char *)buf;
	while ((line = strsep(&p, "\n"))) {
		char *f[8] = { 0 }, *copy, *save = NULL, *tok;
		int nf = 0;
		const char *rest;

		lineno++;
		if (ended)
			bad_fp(fp, lineno, "text after the end line");
		if (!magic) {
			check_magic(path, line);
			magic = true;
			continue;
		}
		if (!*line || line[strlen(line) - 1] == ' ' || strstr(line, "  ") ||
		    strchr(line, '\t') || strchr(line, '\r'))
			bad_fp(fp, lineno, "empty line or stray blanks");
		copy = xstrdup(line);
		for (tok = strtok_r(copy, " ", &save); tok && nf < 8;
		     tok = strtok_r(NULL, " ", &save))
			f[nf++] = tok;
		rest = strchr(line, ' ') ? strchr(line, ' ') + 1 : "";
		if (pending && strcmp(f[0], "part"))
			bad_fp(fp, lineno, "fewer part lines than the func line announces");
		hk = header_key(f[0]);
		if (hk >= 0) {
			if (nitems)
				bad_fp(fp, lineno, "header line after the items");
			if (nf < 2)
				bad_fp(fp, lineno, "header line without a value");
			if (fp->hdr[hk])
				bad_fp(fp, lineno, "repeated header line");
			if (hk == H_CONFIG && (nf != 2 || !is_hash(f[1])))
				bad_fp(fp, lineno, "config digest is not a hash");
			if (hk == H_SYMBOLS && (nf != 2 || !is_num(f[1])))
				bad_fp(fp, lineno, "symbol count is not a number");
			fp->hdr[hk] = xstrdup(rest);
		} else if (!strcmp(f[0], "part")) {
			if (nf != 5 || !valid_name(f[1]) || !valid_label(f[2]) ||
			    !is_num(f[3]) || !is_hash(f[4]))
				bad_fp(fp, lineno, "wrong fields in a part line");
			if (!pending || strcmp(f[1], cur->name))
				bad_fp(fp, lineno, "part line does not belong to the func before it");
			strv_add(&cur->parts, xstrdup(line));
			pending--;
		} else if (!strcmp(f[0], "end")) {
			if (nf != 2 || !is_num(f[1]) || strtoull(f[1], NULL, 10) != nitems)
				bad_fp(fp, lineno, "end line does not match the number of items");
			ended = true;
		} else {
			bool ok;
			const char *ns = "sym";

			if (!strcmp(f[0], "func"))
				ok = nf == 5 && is_num(f[2]) && is_hash(f[3]) &&
				     is_num(f[4]) && strtoul(f[4], NULL, 10) > 0;
			else if (!strcmp(f[0], "data"))
				ok = nf == 4 && is_num(f[2]) &&
				     (is_hash(f[3]) || !strcmp(f[3], "bss"));
			else if (!strcmp(f[0], "absent"))
				ok = nf == 2;
			else if (!strcmp(f[0], "struct"))
				ok = nf == 5 && is_num(f[2]) && is_hash(f[3]) && is_num(f[4]),
				ns = "struct";
			else if (!strcmp(f[0], "absent-struct"))
				ok = nf == 2, ns = "struct";
			else if (!strcmp(f[0], "option"))
				ok = nf == 3 && !strncmp(f[1], "CONFIG_", 7),
				ns = "option";
			else
				bad_fp(fp, lineno, "unknown record");
			if (!ok || !valid_name(f[1])) {
				char why[64];

				snprintf(why, sizeof(why), "wrong fields in a %s line", f[0]);
				bad_fp(fp, lineno, why);
			}
			if (!nitems)
				check_header(fp, lineno);
			fp->items = xrealloc(fp->items, (fp->n + 1) * sizeof(*fp->items));
			cur = &fp->items[fp->n++];
			memset(cur, 0, sizeof(*cur));
			cur->key = xmalloc(strlen(f[1]) + 8);
			sprintf(cur->key, "%s %s", ns, f[1]);
			cur->line = xstrdup(line);
			snprintf(cur->kind, sizeof(cur->kind), "%s", f[0]);
			cur->name = xstrdup(f[1]);
			for (size_t k = 0; k + 1 < fp->n; k++)
				if (!strcmp(fp->items[k].key, cur->key))
					bad_fp(fp, lineno, "item repeated");
			pending = !strcmp(f[0], "func") ? strtoul(f[4], NULL, 10) : 0;
			nitems++;
		}
		free(copy);
	}
	if (!ended)
		fatal("%s: malformed fingerprint file: no end line (truncated?)", path);
	if (!nitems)
		check_header(fp, lineno);
	fp->toolchain = fp->hdr[H_TOOLCHAIN];
	fp->release = fp->hdr[H_RELEASE];
	fp->version = fp->hdr[H_VERSION];
	fp->config = fp->hdr[H_CONFIG];
	fp->config_cc = fp->hdr[H_CONFIG_CC];
	free(buf);
}

static void read_fp(struct fp *fp, const char *path)
{
	size_t size;
	uint8_t *buf = read_file(path, &size);

	parse_fp(fp, path, buf, size);
}

static struct fp_item *fp_find(struct fp *fp, const char *key)
{
	size_t i;

	for (i = 0; i < fp->n; i++)
		if (!strcmp(fp->items[i].key, key))
			return &fp->items[i];
	return NULL;
}

/* Which parts of two func items differ, for the explanation. */
static void explain_parts(struct fp_item *a, struct fp_item *b, struct sbuf *sb)
{
	size_t i, j;
	bool first = true;

	for (i = 0; i < a->parts.n; i++) {
		char *la = a->parts.v[i], *lab = strchr(strchr(la, ' ') + 1, ' ') + 1;
		size_t ll = strcspn(lab, " ");
		bool same = false, found = false;

		for (j = 0; j < b->parts.n; j++) {
			char *lb = b->parts.v[j], *lbb = strchr(strchr(lb, ' ') + 1, ' ') + 1;

			if (strcspn(lbb, " ") == ll && !strncmp(lab, lbb, ll)) {
				found = true;
				same = !strcmp(la, lb);
			}
		}
		if (!same) {
			sb_printf(sb, "%s%.*s%s", first ? "; part " : ", ", (int)ll, lab,
				  found ? "" : " (only in A)");
			first = false;
		}
	}
	for (j = 0; j < b->parts.n; j++) {
		char *lb = b->parts.v[j], *lbb = strchr(strchr(lb, ' ') + 1, ' ') + 1;
		size_t ll = strcspn(lbb, " ");
		bool found = false;

		for (i = 0; i < a->parts.n; i++) {
			char *la = a->parts.v[i], *lab = strchr(strchr(la, ' ') + 1, ' ') + 1;

			if (strcspn(lab, " ") == ll && !strncmp(lab, lbb, ll))
				found = true;
		}
		if (!found) {
			sb_printf(sb, "%s%.*s (only in B)", first ? "; part " : ", ",
				  (int)ll, lbb);
			first = false;
		}
	}
}

static const char *field(const char *line, int n, char *buf, size_t len)
{
	const char *p = line;

	while (n-- > 0 && p)
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	if (!p)
		return "";
	snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

/* What compare_fp() found. */
struct fp_diff {
	size_t nfunc, nstruct, noption, ndata, nabsent, ndiff;
	struct sbuf items;	/* " KIND:NAME" of each difference */
};

static const char *item_kind(const struct fp_item *x)
{
	return !strncmp(x->kind, "absent", 6) ? (!strcmp(x->kind, "absent") ?
	       "func" : "struct") : x->kind;
}

static void count_same(const struct fp_item *x, struct fp_diff *d)
{
	if (!strcmp(x->kind, "func"))
		d->nfunc++;
	else if (!strcmp(x->kind, "struct"))
		d->nstruct++;
	else if (!strcmp(x->kind, "option"))
		d->noption++;
	else if (!strcmp(x->kind, "data"))
		d->ndata++;
	else
		d->nabsent++;
}

static bool same_item(const struct fp_item *x, const struct fp_item *y)
{
	size_t k;

	if (strcmp(x->line, y->line) || x->parts.n != y->parts.n)
		return false;
	for (k = 0; k < x->parts.n; k++)
		if (strcmp(x->parts.v[k], y->parts.v[k]))
			return false;
	return true;
}

/* Why x and y (same key) differ, one line to @out. */
static void explain_item(FILE *out, struct fp_item *x, struct fp_item *y)
{
	struct sbuf why = { 0 };
	char f1[64], f2[64];

	if (!strncmp(x->kind, "absent", 6) || !strncmp(y->kind, "absent", 6)) {
		fprintf(out, "%s %s %s\n", !strncmp(x->kind, "absent", 6) ?
			"absent-in-A" : "absent-in-B",
			strncmp(x->kind, "absent", 6) ? x->kind : y->kind, x->name);
		return;
	}
	if (strcmp(x->kind, y->kind)) {
		fprintf(out, "different %s %s: %s in B\n", x->kind, x->name, y->kind);
		return;
	}
	if (!strcmp(x->kind, "option")) {
		fprintf(out, "different option %s: %s -> %s\n", x->name,
			field(x->line, 2, f1, sizeof(f1)),
			field(y->line, 2, f2, sizeof(f2)));
		return;
	}
	if (strcmp(field(x->line, 2, f1, sizeof(f1)),
		   field(y->line, 2, f2, sizeof(f2))))
		sb_printf(&why, "size %s -> %s", f1, f2);
	else
		sb_puts(&why, "same size");
	if (!strcmp(x->kind, "func"))
		explain_parts(x, y, &why);
	if (!strcmp(x->kind, "struct") &&
	    strcmp(field(x->line, 4, f1, sizeof(f1)),
		   field(y->line, 4, f2, sizeof(f2))))
		sb_printf(&why, "; %s -> %s BTF types of this name", f1, f2);
	fprintf(out, "different %s %s: %s\n", x->kind, x->name, sb_str(&why));
	free(why.p);
}

static void note_diff(struct fp_diff *d, const char *kind, const char *name)
{
	d->ndiff++;
	sb_printf(&d->items, " %s:%s", kind, name);
}

/*
 * Compare @a with @b item by item, by name; also the toolchain and the
 * compiler the configs name.  The config digest, release, version,
 * build id, banner, symbol count and site kinds are informational: they
 * differ between any two builds.  One line per item to @out, if not NULL.
 */
static void compare_fp(struct fp *a, struct fp *b, FILE *out, struct fp_diff *d)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	if (strcmp(a->toolchain, b->toolchain)) {
		if (out)
			fprintf(out, "different toolchain: \"%s\" -> \"%s\"\n",
				a->toolchain, b->toolchain);
		note_diff(d, "toolchain", "compiler");
	} else if (out) {
		fprintf(out, "identical toolchain\n");
	}
	/* both or neither made with --config: one alone proves nothing */
	if (!a->config_cc != !b->config_cc ||
	    (a->config_cc && strcmp(a->config_cc, b->config_cc))) {
		if (out)
			fprintf(out, "different config-cc: \"%s\" -> \"%s\"\n",
				a->config_cc ? a->config_cc : "(no config)",
				b->config_cc ? b->config_cc : "(no config)");
		note_diff(d, "config", "CONFIG_CC_VERSION_TEXT");
	}
	for (i = 0; i < a->n; i++)
		a->items[i].matched = false;
	for (i = 0; i < b->n; i++)
		b->items[i].matched = false;
	for (i = 0; i < a->n; i++) {
		struct fp_item *x = &a->items[i], *y = fp_find(b, x->key);

		if (!y) {
			if (out)
				fprintf(out, "missing-in-B %s %s\n", x->kind, x->name);
			note_diff(d, item_kind(x), x->name);
			continue;
		}
		y->matched = true;
		if (same_item(x, y)) {
			count_same(x, d);
			if (out)
				fprintf(out, "%s %s %s\n", strncmp(x->kind, "absent", 6) ?
					"identical" : "absent-in-both", x->kind, x->name);
			continue;
		}
		note_diff(d, item_kind(x), x->name);
		if (out)
			explain_item(out, x, y);
	}
	for (i = 0; i < b->n; i++) {
		if (b->items[i].matched)
			continue;
		if (out)
			fprintf(out, "missing-in-A %s %s\n", b->items[i].kind,
				b->items[i].name);
		note_diff(d, item_kind(&b->items[i]), b->items[i].name);
	}
}

static int cmd_compare(int argc, char **argv)
{
	struct fp a, b;
	struct fp_diff d;

	if (argc != 2)
		fatal("usage: kfp compare A B");
	read_fp(&a, argv[0]);
	read_fp(&b, argv[1]);
	printf("A: %s %s\nB: %s %s\n", a.release, a.version, b.release, b.version);
	compare_fp(&a, &b, stdout, &d);
	printf("%zu functions, %zu structs, %zu options identical; %zu differ%s%s\n",
	       d.nfunc, d.nstruct, d.noption, d.ndiff, d.ndiff ? ":" : "",
	       d.ndiff ? sb_str(&d.items) : "");
	printf("also identical: %zu data, %zu absent in both\n", d.ndata, d.nabsent);
	finish_stdout();
	free(d.items.p);
	return d.ndiff ? 1 : 0;
}

/* ---- check: an image against the fingerprints of validated builds ---- */

/* "6.12" of "6.12.117+deb12-amd64" (at most 15 characters). */
static void series_of(const char *release, char *out, size_t len)
{
	size_t n = strspn(release, "0123456789");

	if (release[n] == '.')
		n += 1 + strspn(release + n + 1, "0123456789");
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), release);
}

/* Characters @a and @b have in common at the start. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

/* The names a fingerprint covers, to fingerprint another image alike. */
static void lists_of(const struct fp *fp, struct fp_lists *l)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < fp->n; i++) {
		const char *ns = fp->items[i].key;
		char ***v;
		size_t *n;

		if (!strncmp(ns, "sym ", 4))
			v = &l->funcs, n = &l->nfuncs;
		else if (!strncmp(ns, "struct ", 7))
			v = &l->structs, n = &l->nstructs;
		else
			v = &l->options, n = &l->noptions;
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = fp->items[i].name;
	}
	if (!l->nfuncs || !l->nstructs)
		fatal("%s: a fingerprint without functions or structs cannot admit a build",
		      fp->path);
	if (!fp->config_cc || !l->noptions)
		fatal("%s: made without --config and --options: cannot admit a build",
		      fp->path);
}

/* The image fingerprinted as @ref was, parsed into @mine. */
static void fingerprint_like(struct image *img, const struct kconfig *cfg,
			     const struct fp *ref, struct fp *mine)
{
	struct fp_lists l;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		fatal("open_memstream: %s", strerror(errno));
	lists_of(ref, &l);
	emit_fingerprint(f, img, &l, cfg);
	if (fclose(f))
		fatal("open_memstream: %s", strerror(errno));
	parse_fp(mine, img->path, (uint8_t *)buf, size);
	free(l.funcs);
	free(l.structs);
	free(l.options);
}

/*
 * kfp check IMAGE --config CONFIG [--release RELEASE] FINGERPRINT...
 * Is IMAGE equivalent to one of the validated builds whose fingerprints
 * are given: every item of that fingerprint identical, fingerprinted from
 * IMAGE with the fingerprint's own lists?  Records on stdout (image,
 * version, build-id, one ref line per fingerprint, then "equivalent REF"
 * or "refused NEAREST"); exit 0 equivalent, 1 refused, 2 bad input.
 */
static int cmd_check(int argc, char **argv)
{
	const char *image = NULL, *config = NULL, *release = NULL;
	char want[16], have[16];
	const char *admitted = NULL, *nearest = "none";
	size_t i, nrefs = 0, best = SIZE_MAX, closest = 0;
	struct kconfig cfg;
	struct image img;
	struct fp *refs;

	refs = xcalloc((size_t)argc + 1, sizeof(*refs));
	for (i = 0; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--config") || !strcmp(argv[i], "--release")) {
			if (i + 1 >= (size_t)argc)
				fatal("check: %s needs a value", argv[i]);
			*(!strcmp(argv[i], "--config") ? &config : &release) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-') {
			fatal("check: unexpected argument %s", argv[i]);
		} else if (!image) {
			image = argv[i];
		} else {
			read_fp(&refs[nrefs++], argv[i]);
		}
	}
	if (!image || !config || !nrefs)
		fatal("usage: kfp check IMAGE --config CONFIG [--release RELEASE] FINGERPRINT...");
	read_config(config, &cfg);
	open_image(&img, image, &cfg, config);
	if (release && strcmp(release, img.release))
		fatal("%s: the image is of kernel %s, not %s", image, img.release,
		      release);
	printf("image %s\nversion %s\nbuild-id %s\n", img.release, img.version,
	       img.build_id);
	series_of(img.release, have, sizeof(have));
	for (i = 0; i < nrefs; i++) {
		struct fp mine;
		struct fp_diff d;

		series_of(refs[i].release, want, sizeof(want));
		if (strcmp(want, have)) {
			printf("ref %s other-series\n", refs[i].release);
			continue;
		}
		fingerprint_like(&img, &cfg, &refs[i], &mine);
		compare_fp(&refs[i], &mine, NULL, &d);
		if (!d.ndiff) {
			printf("ref %s identical %zu %zu %zu\n", refs[i].release,
			       d.nfunc, d.nstruct, d.noption);
			/* of several, the one whose release is closest to it */
			if (!admitted ||
			    common_prefix(refs[i].release, img.release) > closest) {
				admitted = refs[i].release;
				closest = common_prefix(admitted, img.release);
			}
		} else {
			printf("ref %s differs %zu%s\n", refs[i].release, d.ndiff,
			       sb_str(&d.items));
			if (d.ndiff < best) {
				best = d.ndiff;
				nearest = refs[i].release;
			}
		}
		free(d.items.p);
	}
	if (admitted)
		printf("equivalent %s\n", admitted);
	else
		printf("refused %s\n", nearest);
	finish_stdout();
	return admitted ? 0 : 1;
}

static void __attribute__((noreturn)) usage_exit(void)
{
	fprintf(stderr, "%s",
		"usage: kfp symbols IMAGE\n"
		"       kfp fingerprint IMAGE --functions FILE --structs FILE [--config FILE [--options FILE]] [-o OUT]\n"
		"       kfp compare A B\n"
		"       kfp check IMAGE --config CONFIG [--release RELEASE] FINGERPRINT...\n"
		"       kfp disasm IMAGE NAME...\n"
		"       kfp decoder-check IMAGE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage_exit();
	if (!strcmp(argv[1], "symbols"))
		return cmd_symbols(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fingerprint"))
		return cmd_fingerprint(argc - 2, argv + 2);
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(argc - 2, argv + 2);
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 2, argv + 2);
	if (!strcmp(argv[1], "disasm"))
		return cmd_disasm(argc - 2, argv + 2);
	if (!strcmp(argv[1], "decoder-check"))
		return cmd_decoder_check(argc - 2, argv + 2);
	usage_exit();
}
