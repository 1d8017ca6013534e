/*
 * lib/core/h5_ordered.c - the ordered-write HDF5 driver (see h5_ordered.h).
 *
 * Its own file: a virtual file driver for HDF5 1.10, some 500 lines of
 * HDF5's file-format and driver details, apart from the helpers of
 * h5util.c that every HDF5 user in hml calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/h5_ordered.h"

/*
 * The ordered driver: HDF5's POSIX driver with the order of writes arranged
 * so that a process killed at any moment leaves a file that opens and reads
 * either as it was before HDF5's last flush or as it is after it.
 *
 * HDF5 1.10 writing the 1.8 format (which h5py and h5dump expect of us)
 * is not safe against a kill: a metadata flush writes object headers and
 * B-tree nodes that point at newly allocated space before the superblock
 * that moves the end of the file past that space. Killed in between, the
 * file fails to read ("addr overflow"), and the next writer, taking the old
 * end from the superblock, allocates over chunks in use.
 *
 * So this driver writes at once what the superblock on disk does not cover
 * yet (nothing on disk points there) and raw data (the collector only adds
 * rows beyond the extent on disk; a partly filled chunk is rewritten with
 * its old rows unchanged). Metadata that overwrites blocks in use is held
 * until HDF5 flushes or truncates the file, and then written as: the file
 * extended, the superblock (a longer file is harmless to old metadata),
 * local heaps (they only grow, names keep their offsets), B-tree nodes from
 * the root down (a parent that already knows a split-off node is harmless
 * to the old child), symbol table nodes, object headers last (a data set's
 * new extent appears once all it points at is on disk). The collector adds
 * to this by writing its `calls` table in a flush of its own, after the
 * rows the records point at.
 *
 * Not covered: a file whose superblock this driver does not understand (a
 * user block, 4-byte addresses, the superblock of a newer file format) is
 * written straight through, as HDF5's own driver does; a local heap that
 * has outgrown its first block takes two writes to change, which a kill
 * can separate (file_creation() in h5util.c gives a new file's root heap
 * room for some hundred labels); space freed by deleting an object
 * (hml_qoi_write() replacing a data set) may be reused at once. The bytes
 * on disk are plain HDF5.
 */
#if H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
#define HML_ORDERED_DRIVER 1

#define ORDERED_MAXADDR (((haddr_t)1 << (8 * sizeof(off_t) - 1)) - 1)
#define ORDERED_IO_MAX ((size_t)1 << 30)

typedef struct {
	haddr_t addr;
	size_t size;
	H5FD_mem_t type;
	unsigned char *data;
} held_block;

typedef struct {
	H5FD_t pub;            /* first: HDF5 sees this part */
	int fd;
	haddr_t eoa, eof;
	/* The end of the file as the superblock on disk records it; writes
	 * below it (other than raw data) are held. 0 with `plain`: none are. */
	haddr_t committed;
	int plain;
	dev_t dev;
	ino_t ino;
	held_block *held;
	size_t nheld, capheld;
} ordered_file;

static pthread_mutex_t ordered_mutex = PTHREAD_MUTEX_INITIALIZER;
static hid_t ordered_id = H5I_INVALID_HID;

static void vfd_error(const char *func, unsigned line, hid_t minor,
                      const char *fmt, ...) HML__PRINTF(4, 5);

static void vfd_error(const char *func, unsigned line, hid_t minor,
                      const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	H5Epush2(H5E_DEFAULT, __FILE__, func, line, H5E_ERR_CLS, H5E_VFL, minor,
	         "%s", msg);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* The end-of-file address that a superblock image at address 0 records,
 * or 0 for an image this driver does not understand. Only versions 0 and
 * 1, of the file format that HDF5 writes by default and whose structures
 * the order above is made for, are understood. */
static haddr_t superblock_eof(const unsigned char *b, size_t n)
{
	static const unsigned char signature[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
	size_t at;

	if (n < 56 || memcmp(b, signature, 8) != 0 || b[8] > 1 || b[13] != 8)
		return 0;
	at = b[8] == 0 ? 24 : 28;
	if (le64(b + at) != 0)      /* base address: a user block */
		return 0;
	return (haddr_t)le64(b + at + 16);
}

static herr_t write_through(ordered_file *f, haddr_t addr, size_t size,
                            const void *buf)
{
	const unsigned char *p = buf;
	haddr_t at = addr;
	ssize_t n;

	while (size > 0) {
		n = pwrite(f->fd, p, size > ORDERED_IO_MAX ? ORDERED_IO_MAX : size,
		           (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			vfd_error(__func__, __LINE__, H5E_WRITEERROR,
			          "write failed: %s", n < 0 ? strerror(errno) : "no progress");
			return -1;
		}
		p += n;
		at += (haddr_t)n;
		size -= (size_t)n;
	}
	if (at > f->eof)
		f->eof = at;
	return 0;
}

/* Copy the part of [addr, addr + size) that `b` holds from src (which
 * starts at addr) into it, or from it into dst. */
static void overlap_copy(held_block *b, haddr_t addr, size_t size,
                         const unsigned char *src, unsigned char *dst)
{
	haddr_t lo = addr > b->addr ? addr : b->addr;
	haddr_t hi = addr + size < b->addr + b->size ? addr + size : b->addr + b->size;

	if (lo >= hi)
		return;
	if (src)
		memcpy(b->data + (lo - b->addr), src + (lo - addr), (size_t)(hi - lo));
	else
		memcpy(dst + (lo - addr), b->data + (lo - b->addr), (size_t)(hi - lo));
}

static herr_t hold(ordered_file *f, H5FD_mem_t type, haddr_t addr, size_t size,
                   const void *buf)
{
	held_block *b;
	size_t i;
	int exact = 0;

	/* Held blocks always carry the newest bytes of their range. */
	for (i = 0; i < f->nheld; i++) {
		overlap_copy(&f->held[i], addr, size, buf, NULL);
		if (f->held[i].addr == addr && f->held[i].size == size) {
			f->held[i].type = type;
			exact = 1;
		}
	}
	if (exact)
		return 0;
	if (f->nheld == f->capheld) {
		size_t cap = f->capheld ? 2 * f->capheld : 16;
		held_block *grown = realloc(f->held, cap * sizeof(*grown));
		if (!grown) {
			vfd_error(__func__, __LINE__, H5E_CANTALLOC, "out of memory");
			return -1;
		}
		f->held = grown;
		f->capheld = cap;
	}
	b = &f->held[f->nheld];
	if (!(b->data = malloc(size ? size : 1))) {
		vfd_error(__func__, __LINE__, H5E_CANTALLOC, "out of memory");
		return -1;
	}
	memcpy(b->data, buf, size);
	b->addr = addr;
	b->size = size;
	b->type = type;
	f->nheld++;
	return 0;
}

/*
 * Superblock first; then local heaps (a heap only grows and keeps every
 * name at its offset, and group B-tree keys are such offsets); B-tree
 * nodes from the root down; symbol table nodes; object headers last.
 */
static int held_rank(const held_block *b)
{
	switch (b->type) {
	case H5FD_MEM_SUPER:
		return 0;
	case H5FD_MEM_LHEAP:
		return 1;
	case H5FD_MEM_BTREE:
		if (b->size > 6 && memcmp(b->data, "TREE", 4) == 0)
			return 2 + (255 - b->data[5]);
		return 300;
	case H5FD_MEM_OHDR:
		return 400;
	default:
		return 350;
	}
}

static int held_order(const void *pa, const void *pb)
{
	const held_block *a = pa, *b = pb;
	int ra = held_rank(a), rb = held_rank(b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return 0;
}

static void release_held(ordered_file *f)
{
	size_t i;

	for (i = 0; i < f->nheld; i++)
		free(f->held[i].data);
	f->nheld = 0;
}

static herr_t commit(ordered_file *f)
{
	haddr_t need = f->eoa, sb_end = 0;
	size_t i;

	if (f->nheld == 0)
		return 0;
	for (i = 0; i < f->nheld; i++)
		if (f->held[i].type == H5FD_MEM_SUPER && f->held[i].addr == 0)
			sb_end = superblock_eof(f->held[i].data, f->held[i].size);
	if (sb_end > need)
		need = sb_end;
	if (f->eof < need) {
		if (ftruncate(f->fd, (off_t)need) < 0) {
			vfd_error(__func__, __LINE__, H5E_WRITEERROR,
			          "unable to extend file: %s", strerror(errno));
			return -1;
		}
		f->eof = need;
	}
	qsort(f->held, f->nheld, sizeof(*f->held), held_order);
	for (i = 0; i < f->nheld; i++)
		if (write_through(f, f->held[i].addr, f->held[i].size, f->held[i].data) < 0)
			return -1;
	if (sb_end)
		f->committed = sb_end;
	release_held(f);
	return 0;
}

static H5FD_t *ordered_open(const char *name, unsigned flags, hid_t fapl,
                            haddr_t maxaddr)
{
	unsigned char sb[64];
	ordered_file *f;
	struct stat st;
	int o_flags, fd;
	ssize_t n;

	if (!name || !*name || maxaddr == 0 || maxaddr == HADDR_UNDEF ||
	    maxaddr > ORDERED_MAXADDR) {
		vfd_error(__func__, __LINE__, H5E_BADVALUE, "invalid file name or size");
		return NULL;
	}
	o_flags = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
	if (flags & H5F_ACC_TRUNC)
		o_flags |= O_TRUNC;
	if (flags & H5F_ACC_CREAT)
		o_flags |= O_CREAT;
	if (flags & H5F_ACC_EXCL)
		o_flags |= O_EXCL;
	if ((fd = open(name, o_flags, 0666)) < 0) {
		vfd_error(__func__, __LINE__, H5E_CANTOPENFILE,
		          "unable to open file: name = '%s', errno = %d, error message = '%s'",
		          name, errno, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !(f = calloc(1, sizeof(*f)))) {
		vfd_error(__func__, __LINE__, H5E_CANTOPENFILE,
		          "unable to open file '%s': %s", name, strerror(errno));
		close(fd);
		return NULL;
	}
	f->fd = fd;
	f->eof = (haddr_t)st.st_size;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if ((flags & H5F_ACC_RDWR) && f->eof > 0) {
		n = pread(fd, sb, sizeof(sb), 0);
		f->committed = n > 0 ? superblock_eof(sb, (size_t)n) : 0;
		if (f->committed > f->eof)
			f->committed = f->eof;
		f->plain = f->committed == 0;
	}
	return &f->pub;
}

static herr_t ordered_close(H5FD_t *file)
{
	ordered_file *f = (ordered_file *)file;
	herr_t rc = commit(f);

	release_held(f);
	free(f->held);
	if (close(f->fd) < 0 && rc == 0) {
		vfd_error(__func__, __LINE__, H5E_CANTCLOSEFILE,
		          "unable to close file: %s", strerror(errno));
		rc = -1;
	}
	free(f);
	return rc;
}

static int ordered_cmp(const H5FD_t *a, const H5FD_t *b)
{
	const ordered_file *x = (const ordered_file *)a, *y = (const ordered_file *)b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static herr_t ordered_query(const H5FD_t *file, unsigned long *flags)
{
	/* Not H5FD_FEAT_ACCUMULATE_METADATA: the accumulator would merge
	 * metadata blocks of different kinds into one untyped write. */
	if (flags)
		*flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_DATA_SIEVE |
		         H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE |
		         H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
	return 0;
}

static haddr_t ordered_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
	return ((const ordered_file *)file)->eoa;
}

static herr_t ordered_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
	if (addr > ORDERED_MAXADDR) {
		vfd_error(__func__, __LINE__, H5E_OVERFLOW, "address overflow");
		return -1;
	}
	((ordered_file *)file)->eoa = addr;
	return 0;
}

static haddr_t ordered_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
	return ((const ordered_file *)file)->eof;
}

static herr_t ordered_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
	if (!handle)
		return -1;
	*handle = &((ordered_file *)file)->fd;
	return 0;
}

/* An access past the end of the allocated space: HDF5's error, as its
 * own driver reports it, pushed for the caller `func`. */
static int past_eoa(const ordered_file *f, haddr_t addr, size_t size, const char *func,
                    unsigned line)
{
	if (addr != HADDR_UNDEF && addr + size <= f->eoa)
		return 0;
	vfd_error(func, line, H5E_OVERFLOW, "addr overflow, addr = %llu, size = %llu, eoa = %llu",
	          (unsigned long long)addr, (unsigned long long)size,
	          (unsigned long long)f->eoa);
	return 1;
}

static herr_t ordered_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl,
                           haddr_t addr, size_t size, void *buf)
{
	ordered_file *f = (ordered_file *)file;
	unsigned char *p = buf;
	haddr_t at = addr;
	size_t left = size, i;
	ssize_t n;

	if (past_eoa(f, addr, size, __func__, __LINE__))
		return -1;
	while (left > 0) {
		n = pread(f->fd, p, left > ORDERED_IO_MAX ? ORDERED_IO_MAX : left, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vfd_error(__func__, __LINE__, H5E_READERROR, "read failed: %s",
			          strerror(errno));
			return -1;
		}
		if (n == 0) {           /* past the end: zeros, as HDF5's driver */
			memset(p, 0, left);
			break;
		}
		p += n;
		at += (haddr_t)n;
		left -= (size_t)n;
	}
	for (i = 0; i < f->nheld; i++)
		overlap_copy(&f->held[i], addr, size, NULL, buf);
	return 0;
}

static herr_t ordered_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl,
                            haddr_t addr, size_t size, const void *buf)
{
	ordered_file *f = (ordered_file *)file;
	size_t i;

	if (past_eoa(f, addr, size, __func__, __LINE__))
		return -1;
	if (type != H5FD_MEM_DRAW && addr < f->committed)
		return hold(f, type, addr, size, buf);
	for (i = 0; i < f->nheld; i++)
		overlap_copy(&f->held[i], addr, size, buf, NULL);
	return write_through(f, addr, size, buf);
}

/* A file this session created is on disk in full after its first flush;
 * from then on its writes are ordered as well. */
static void settle(ordered_file *f)
{
	if (!f->plain && f->committed == 0)
		f->committed = f->eoa < f->eof ? f->eoa : f->eof;
}

static herr_t ordered_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
	ordered_file *f = (ordered_file *)file;

	if (commit(f) < 0)
		return -1;
	settle(f);
	return 0;
}

static herr_t ordered_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
	ordered_file *f = (ordered_file *)file;
	haddr_t size;

	if (commit(f) < 0)
		return -1;
	/* Never shorter than the superblock on disk says the file is. */
	size = f->eoa > f->committed ? f->eoa : f->committed;
	if (size != f->eof) {
		if (ftruncate(f->fd, (off_t)size) < 0) {
			vfd_error(__func__, __LINE__, H5E_SEEKERROR,
			          "unable to extend file properly: %s", strerror(errno));
			return -1;
		}
		f->eof = size;
	}
	settle(f);
	return 0;
}

static herr_t ordered_lock(H5FD_t *file, hbool_t rw)
{
	ordered_file *f = (ordered_file *)file;

	if (flock(f->fd, (rw ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0 && errno != ENOSYS) {
		vfd_error(__func__, __LINE__, H5E_CANTLOCKFILE,
		          "unable to lock file, errno = %d, error message = '%s'",
		          errno, strerror(errno));
		return -1;
	}
	return 0;
}

static herr_t ordered_unlock(H5FD_t *file)
{
	ordered_file *f = (ordered_file *)file;

	if (flock(f->fd, LOCK_UN) < 0 && errno != ENOSYS) {
		vfd_error(__func__, __LINE__, H5E_CANTUNLOCKFILE,
		          "unable to unlock file, errno = %d, error message = '%s'",
		          errno, strerror(errno));
		return -1;
	}
	return 0;
}

static const H5FD_class_t ordered_class = {
	"hml_ordered", ORDERED_MAXADDR, H5F_CLOSE_WEAK,
	NULL,                       /* terminate */
	NULL, NULL, NULL,           /* superblock driver info: none */
	0, NULL, NULL, NULL,        /* file access properties: none */
	0, NULL, NULL,              /* transfer properties: none */
	ordered_open, ordered_close, ordered_cmp, ordered_query,
	NULL,                       /* get_type_map */
	NULL, NULL,                 /* alloc, free: HDF5's own */
	ordered_get_eoa, ordered_set_eoa, ordered_get_eof, ordered_get_handle,
	ordered_read, ordered_write, ordered_flush, ordered_truncate,
	ordered_lock, ordered_unlock,
	H5FD_FLMAP_DICHOTOMY
};

/* The driver's id, registered again if HDF5 was closed and reopened. */
static hid_t ordered_driver(void)
{
	hid_t id;

	pthread_mutex_lock(&ordered_mutex);
	if (ordered_id < 0 || H5Iis_valid(ordered_id) <= 0)
		ordered_id = H5FDregister(&ordered_class);
	id = ordered_id;
	pthread_mutex_unlock(&ordered_mutex);
	return id;
}
#endif /* HDF5 1.10 */

int hml__h5_ordered_use(hid_t fapl)
{
#ifdef HML_ORDERED_DRIVER
	hid_t driver = ordered_driver();

	if (driver >= 0 && H5Pset_driver(fapl, driver, NULL) < 0)
		return -1;
#else
	(void)fapl;
#endif
	return 0;
}
