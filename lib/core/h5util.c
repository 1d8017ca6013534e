#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/h5_ordered.h"
#include "core/h5util.h"
#include "core/util.h"

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static char h5_version[32] = "unknown";

/* The Debian build of HDF5 is thread-safe, and then every thread has its
 * own error stack with its own automatic printing switched on: silence it
 * once per thread, not once per process. */
static _Thread_local int h5_thread_quiet;

static void h5_init_once(void)
{
	unsigned maj = 0, min = 0, rel = 0;

	H5open();
	if (H5get_libversion(&maj, &min, &rel) >= 0)
		snprintf(h5_version, sizeof(h5_version), "%u.%u.%u", maj, min, rel);
}

void hml__h5_init(void)
{
	pthread_once(&h5_once, h5_init_once);
	if (!h5_thread_quiet) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		h5_thread_quiet = 1;
	}
}

const char *hml__h5_version(void)
{
	hml__h5_init();
	return h5_version;
}

typedef struct {
	int found;
	char text[256];
} h5_reason;

/* Walking upward, entry 0 is where the failure was first detected: the
 * most specific description. Its free text ("truncated file: eof = ...")
 * says more than the minor code's name; the name is the fall-back. */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *payload)
{
	h5_reason *r = payload;
	H5E_type_t type;
	ssize_t len;

	if (n != 0 || r->found)
		return 0;
	if (e->desc && *e->desc) {
		snprintf(r->text, sizeof(r->text), "%s", e->desc);
		r->found = 1;
	} else {
		len = H5Eget_msg(e->min_num, &type, r->text, sizeof(r->text));
		r->found = len > 0;
	}
	return 0;
}

int hml__h5_error(int code, const char *fmt, ...)
{
	char head[512];
	h5_reason reason;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memset(&reason, 0, sizeof(reason));
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, &reason);
	if (reason.found)
		return hml__error_set(code, "%s: %s", head, reason.text);
	return hml__error_set(code, "%s", head);
}

static hid_t file_access(int write)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl < 0)
		return fapl;
	/* Keep HDF5's advisory locks, but do not fail on file systems that
	 * do not support them (some NFS mounts). */
	H5Pset_file_locking(fapl, 1, 1);
	if (write && hml__h5_ordered_use(fapl) < 0) {
		H5Pclose(fapl);
		return H5I_INVALID_HID;
	}
	return fapl;
}

static uint64_t le_field(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = (v << 8) | p[n];
	return v;
}

static int superblock_bad(const char *path, const char *fmt, ...) HML__PRINTF(2, 3);

static int superblock_bad(const char *path, const char *fmt, ...)
{
	char reason[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return hml__error_set(HML_EIO, "'%s' is not a valid HDF5 file: %s", path,
	                      reason);
}

/*
 * HDF5 sizes its first reads of a file from the file's own superblock and
 * allocates before it checks what it read: a damaged superblock (addresses
 * all ones, a file cut short) made H5Fopen() allocate 4 GiB (issue #9).
 * So the fixed part of the superblock is checked here first, against the
 * size of the file, the way HDF5 itself checks it only later: the
 * signature where HDF5 looks for it (0, 512, 1024, ... before the end),
 * a known version, sizes of offsets and lengths of 2, 4 or 8 bytes, the
 * fixed fields all present, base and end-of-file addresses defined, the
 * end no further than the file goes (HDF5's "truncated file"), and the
 * driver information block of a version 0/1 superblock inside the file.
 * Layouts from the HDF5 File Format Specification, section II.A.
 * Returns 0 when it passes, 1 when there is no signature, or HML_EIO.
 */
static int check_superblock(const char *path, int fd, uint64_t size)
{
	static const unsigned char signature[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
	unsigned char b[128], d[16];
	uint64_t at, base, eof, end, drv, undef;
	unsigned version, so, sl, fixed, need;
	ssize_t got;

	for (at = 0;; at = at ? at * 2 : 512) {
		if (at > size || size - at < sizeof(signature))
			return 1;
		got = pread(fd, b, sizeof(signature), (off_t)at);
		if (got < 0)
			return hml__error_set(HML_EIO, "cannot read '%s': %s", path,
			                      strerror(errno));
		if (got == (ssize_t)sizeof(signature) &&
		    memcmp(b, signature, sizeof(signature)) == 0)
			break;
	}
	memset(b, 0, sizeof(b));
	if ((got = pread(fd, b, sizeof(b), (off_t)at)) < 0)
		return hml__error_set(HML_EIO, "cannot read '%s': %s", path,
		                      strerror(errno));
	version = b[8];
	if (version > 3)
		return superblock_bad(path, "unknown superblock version %u", version);
	/* Versions 0 and 1: 8 bytes of versions and sizes, the B-tree K values
	 * and flags (version 1: 4 bytes more), then base, free-space,
	 * end-of-file and driver information addresses and the root group's
	 * symbol table entry (2 addresses, 24 bytes). Versions 2 and 3: sizes
	 * and flags in 4 bytes, base, extension, end-of-file and root object
	 * header addresses, a checksum. */
	so = version < 2 ? b[13] : b[9];
	sl = version < 2 ? b[14] : b[10];
	if (so != 2 && so != 4 && so != 8)
		return superblock_bad(path, "size of offsets %u (2, 4 or 8 allowed)", so);
	if (sl != 2 && sl != 4 && sl != 8)
		return superblock_bad(path, "size of lengths %u (2, 4 or 8 allowed)", sl);
	fixed = version == 0 ? 24 : version == 1 ? 28 : 12;
	need = version < 2 ? fixed + 4 * so + 2 * so + 24 : fixed + 4 * so + 4;
	if ((uint64_t)got < need)
		return superblock_bad(path, "superblock cut short (%zd of %u bytes)",
		                      got, need);
	undef = so == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * so)) - 1;
	base = le_field(b + fixed, so);
	eof = le_field(b + fixed + 2 * so, so);
	if (base == undef)
		return superblock_bad(path, "base address undefined");
	if (eof == undef)
		return superblock_bad(path, "end-of-file address undefined");
	/* Addresses count from the base; HDF5 moves a base that differs from
	 * where it found the superblock there, and the end with it. */
	if (base > at && eof < base - at)
		return superblock_bad(path, "end-of-file address before the superblock");
	if (base <= at && eof > UINT64_MAX - (at - base))
		return superblock_bad(path, "end-of-file address out of range");
	end = base > at ? eof - (base - at) : eof + (at - base);
	if (end > size)
		return superblock_bad(path, "truncated file (%" PRIu64 " bytes, the "
		                      "superblock says %" PRIu64 ")", size, end);
	if (version >= 2)
		return 0;
	drv = le_field(b + fixed + 3 * so, so);
	if (drv == undef)
		return 0;
	/* Version, 3 reserved bytes, the size of the information, the
	 * driver's name in 8 bytes, the information. */
	if (drv > end || end - drv < sizeof(d) ||
	    pread(fd, d, sizeof(d), (off_t)(at + drv)) != (ssize_t)sizeof(d) ||
	    le_field(d + 4, 4) > end - drv - sizeof(d))
		return superblock_bad(path, "driver information block beyond the "
		                      "end of the file");
	return 0;
}

/* An existing file: readable (and writable when asked), a regular file,
 * and one that HDF5 recognises, with a superblock that it can read
 * without being led astray. Returns 1 when it is empty, 0 otherwise. */
static int check_existing(const char *path, const struct stat *st, int write)
{
	htri_t is;
	int fd, rc;

	if (S_ISDIR(st->st_mode))
		return hml__error_set(HML_EIO, "cannot %s '%s': %s",
		                      write ? "write" : "read", path, strerror(EISDIR));
	if (!S_ISREG(st->st_mode))
		return hml__error_set(HML_EIO, "cannot %s '%s': not a regular file",
		                      write ? "write" : "read", path);
	if ((fd = open(path, write ? O_RDWR : O_RDONLY)) < 0)
		return hml__error_set(HML_EIO, "cannot %s '%s': %s",
		                      write ? "write" : "read", path, strerror(errno));
	if (st->st_size == 0) {
		close(fd);
		return 1;
	}
	rc = check_superblock(path, fd, (uint64_t)st->st_size);
	close(fd);
	if (rc == 1)
		return hml__error_set(HML_EIO, "'%s' is not an HDF5 file", path);
	if (rc < 0)
		return rc;
	is = H5Fis_hdf5(path);
	if (is == 0)
		return hml__error_set(HML_EIO, "'%s' is not an HDF5 file", path);
	if (is < 0)
		return hml__h5_error(HML_EIO, "cannot read '%s'", path);
	return 0;
}

/* A new file's root group keeps its names in a local heap. A heap that has
 * outgrown its first block lives apart from its header, and a name added
 * to it then takes two writes that a kill can separate; with room for some
 * hundred labels from the start, header and names stay one block. */
static hid_t file_creation(void)
{
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);

	if (fcpl >= 0 && H5Pset_local_heap_size_hint(fcpl, 8192) < 0) {
		H5Pclose(fcpl);
		return H5I_INVALID_HID;
	}
	return fcpl;
}

int hml__h5_open_rw(hid_t *out, const char *path)
{
	struct stat st;
	hid_t fapl = H5I_INVALID_HID, fcpl = H5I_INVALID_HID, file = H5I_INVALID_HID;
	int rc = 0, fd, created = 0;

	*out = H5I_INVALID_HID;
	hml__h5_init();
	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "HDF5 file name is empty");
	if ((fapl = file_access(1)) < 0 || (fcpl = file_creation()) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write '%s'", path);
		goto done;
	}
	if (stat(path, &st) == 0) {
		if ((rc = check_existing(path, &st, 1)) < 0)
			goto done;
		if (rc == 1) {
			/* An empty file (from mktemp, say) holds nothing to lose. */
			rc = 0;
			file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
		} else {
			file = H5Fopen(path, H5F_ACC_RDWR, fapl);
		}
		if (file < 0) {
			rc = hml__h5_error(HML_EIO, "cannot open '%s'", path);
			goto done;
		}
	} else if (errno == ENOENT) {
		/* Create it ourselves first: the system's reason for a refusal
		 * ("Permission denied") is clearer than HDF5's account of it. */
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666)) < 0) {
			rc = hml__error_set(HML_EIO, "cannot write '%s': %s", path,
			                    strerror(errno));
			goto done;
		}
		close(fd);
		created = 1;
		file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
		if (file < 0) {
			rc = hml__h5_error(HML_EIO, "cannot write '%s'", path);
			goto done;
		}
	} else {
		rc = hml__error_set(HML_EIO, "cannot write '%s': %s", path,
		                    strerror(errno));
		goto done;
	}
	*out = file;
done:
	if (rc < 0 && created)
		unlink(path);
	if (fcpl >= 0)
		H5Pclose(fcpl);
	if (fapl >= 0)
		H5Pclose(fapl);
	return rc;
}

int hml__h5_open_ro(hid_t *out, const char *path)
{
	struct stat st;
	hid_t fapl = H5I_INVALID_HID, file;
	int rc = 0;

	*out = H5I_INVALID_HID;
	hml__h5_init();
	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "HDF5 file name is empty");
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return hml__error_set(HML_ENOTFOUND, "cannot read '%s': %s",
			                      path, strerror(errno));
		return hml__error_set(HML_EIO, "cannot read '%s': %s", path,
		                      strerror(errno));
	}
	if ((rc = check_existing(path, &st, 0)) < 0)
		return rc;
	if (rc == 1)
		return hml__error_set(HML_EIO, "'%s' is not an HDF5 file", path);
	if ((fapl = file_access(0)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot read '%s'", path);
		goto done;
	}
	if ((file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot open '%s'", path);
		goto done;
	}
	*out = file;
done:
	if (fapl >= 0)
		H5Pclose(fapl);
	return rc;
}

hid_t hml__h5_type(hml_dtype dtype)
{
	switch (dtype) {
	case HML_F32: return H5T_NATIVE_FLOAT;
	case HML_F64: return H5T_NATIVE_DOUBLE;
	default: return H5I_INVALID_HID;
	}
}

hml_dtype hml__h5_dtype(hid_t type)
{
	if (H5Tget_class(type) != H5T_FLOAT)
		return (hml_dtype)0;
	switch (H5Tget_size(type)) {
	case 4: return HML_F32;
	case 8: return HML_F64;
	default: return (hml_dtype)0;
	}
}

/* Open attribute `name` for writing when it exists with a scalar space and
 * a type of `cls` (it is then overwritten in place, which leaves the object
 * header as it is); delete it otherwise. 0: create it anew. */
static int attr_reuse(hid_t obj, const char *name, H5T_class_t cls, hid_t *out)
{
	hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID;
	htri_t exists;
	int rc = 0, same;

	*out = H5I_INVALID_HID;
	if ((exists = H5Aexists(obj, name)) < 0)
		return hml__h5_error(HML_EIO, "cannot write attribute '%s'", name);
	if (!exists)
		return 0;
	if ((attr = H5Aopen(obj, name, H5P_DEFAULT)) < 0 ||
	    (type = H5Aget_type(attr)) < 0 || (space = H5Aget_space(attr)) < 0) {
		rc = hml__h5_error(HML_EIO, "cannot write attribute '%s'", name);
		goto done;
	}
	same = H5Tget_class(type) == cls &&
	       H5Sget_simple_extent_type(space) == H5S_SCALAR;
	if (same && cls == H5T_STRING)
		same = H5Tis_variable_str(type) > 0;
	if (same && (cls == H5T_INTEGER || cls == H5T_FLOAT))
		same = H5Tget_size(type) == 8;
	if (same) {
		*out = attr;
		attr = H5I_INVALID_HID;
	} else {
		H5Aclose(attr);
		attr = H5I_INVALID_HID;
		if (H5Adelete(obj, name) < 0)
			rc = hml__h5_error(HML_EIO, "cannot replace attribute '%s'", name);
	}
done:
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (attr >= 0)
		H5Aclose(attr);
	return rc;
}

static hid_t vlen_utf8(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);

	if (t < 0)
		return t;
	if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
		H5Tclose(t);
		return H5I_INVALID_HID;
	}
	return t;
}

static int attr_write(hid_t obj, const char *name, H5T_class_t cls,
                      hid_t file_type, hid_t mem_type, const void *buf)
{
	hid_t attr = H5I_INVALID_HID, space = H5I_INVALID_HID;
	int rc;

	if ((rc = attr_reuse(obj, name, cls, &attr)) < 0)
		goto done;
	if (attr < 0) {
		if ((space = H5Screate(H5S_SCALAR)) < 0 ||
		    (attr = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT,
		                       H5P_DEFAULT)) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot write attribute '%s'", name);
			goto done;
		}
	}
	if (H5Awrite(attr, mem_type, buf) < 0)
		rc = hml__h5_error(HML_EIO, "cannot write attribute '%s'", name);
done:
	if (attr >= 0)
		H5Aclose(attr);
	if (space >= 0)
		H5Sclose(space);
	return rc;
}

int hml__h5_attr_set_str(hid_t obj, const char *name, const char *value)
{
	const char *v = value ? value : "";
	hid_t type;
	int rc;

	hml__h5_init();
	if ((type = vlen_utf8()) < 0)
		return hml__h5_error(HML_EIO, "cannot write attribute '%s'", name);
	rc = attr_write(obj, name, H5T_STRING, type, type, &v);
	H5Tclose(type);
	return rc;
}

int hml__h5_attr_set_i64(hid_t obj, const char *name, int64_t value)
{
	hml__h5_init();
	return attr_write(obj, name, H5T_INTEGER, H5T_STD_I64LE, H5T_NATIVE_INT64,
	                  &value);
}

int hml__h5_attr_set_f64(hid_t obj, const char *name, double value)
{
	hml__h5_init();
	return attr_write(obj, name, H5T_FLOAT, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
	                  &value);
}

static int attr_open(hid_t obj, const char *name, hid_t *out)
{
	htri_t exists;

	*out = H5I_INVALID_HID;
	if ((exists = H5Aexists(obj, name)) < 0)
		return hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
	if (!exists)
		return hml__error_set(HML_ENOTFOUND, "attribute '%s' not found", name);
	if ((*out = H5Aopen(obj, name, H5P_DEFAULT)) < 0)
		return hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
	return 0;
}

/* Open attribute `name` of `obj` and check that it holds one value of class
 * `cls` ("a string", "an integer": `what`). On success *attr and *type are
 * the caller's to close; on failure both are closed and invalid. */
static int attr_open_scalar(hid_t obj, const char *name, H5T_class_t cls,
                            const char *what, hid_t *attr, hid_t *type)
{
	hid_t space = H5I_INVALID_HID;
	int rc;

	*type = H5I_INVALID_HID;
	if ((rc = attr_open(obj, name, attr)) < 0)
		return rc;
	if ((*type = H5Aget_type(*attr)) < 0 || (space = H5Aget_space(*attr)) < 0)
		rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
	else if (H5Tget_class(*type) != cls || H5Sget_simple_extent_npoints(space) != 1)
		rc = hml__error_set(HML_EINVALID, "attribute '%s' is not %s", name, what);
	if (space >= 0)
		H5Sclose(space);
	if (rc < 0) {
		if (*type >= 0)
			H5Tclose(*type);
		H5Aclose(*attr);
		*attr = *type = H5I_INVALID_HID;
	}
	return rc;
}

int hml__h5_attr_get_str(hid_t obj, const char *name, char **out)
{
	hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID;
	hid_t mem = H5I_INVALID_HID;
	char *vstr = NULL, *s = NULL;
	size_t size;
	int rc;

	*out = NULL;
	hml__h5_init();
	if ((rc = attr_open_scalar(obj, name, H5T_STRING, "a string", &attr, &type)) < 0)
		goto done;
	if (H5Tis_variable_str(type) > 0) {
		if ((mem = vlen_utf8()) < 0 || H5Aread(attr, mem, &vstr) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
			goto done;
		}
		s = hml__strdup(vstr ? vstr : "");
		H5free_memory(vstr);
	} else {
		size = H5Tget_size(type);
		if ((mem = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(mem, size + 1) < 0 ||
		    H5Tset_strpad(mem, H5T_STR_NULLTERM) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
			goto done;
		}
		if (!(s = calloc(1, size + 1))) {
			rc = hml__error_oom();
			goto done;
		}
		if (H5Aread(attr, mem, s) < 0) {
			rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
			free(s);
			s = NULL;
			goto done;
		}
	}
	if (!s) {
		rc = HML_ENOMEM;
		goto done;
	}
	*out = s;
done:
	if (mem >= 0)
		H5Tclose(mem);
	if (type >= 0)
		H5Tclose(type);
	if (attr >= 0)
		H5Aclose(attr);
	return rc;
}

int hml__h5_attr_get_i64(hid_t obj, const char *name, int64_t *out)
{
	hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID;
	int64_t v;
	int rc;

	hml__h5_init();
	if ((rc = attr_open_scalar(obj, name, H5T_INTEGER, "an integer", &attr, &type)) < 0)
		return rc;
	if (H5Aread(attr, H5T_NATIVE_INT64, &v) < 0)
		rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
	else
		*out = v;
	H5Tclose(type);
	H5Aclose(attr);
	return rc;
}

int hml__h5_attr_get_f64(hid_t obj, const char *name, double *out)
{
	hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID;
	double v;
	int rc;

	hml__h5_init();
	if ((rc = attr_open_scalar(obj, name, H5T_FLOAT, "a number", &attr, &type)) < 0)
		return rc;
	if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0)
		rc = hml__h5_error(HML_EIO, "cannot read attribute '%s'", name);
	else
		*out = v;
	H5Tclose(type);
	H5Aclose(attr);
	return rc;
}
