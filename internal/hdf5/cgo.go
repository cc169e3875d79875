//go:build cgo

package hdf5

/*
#cgo pkg-config: hdf5
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>

// Every wrapper first turns off the library's printing of error stacks (the setting is per
// thread in the thread-safe library, and goroutines move between threads), and on failure
// copies the innermost message into msg.

typedef struct { char msg[256]; int found; } h5w_err;

static herr_t h5w_walk(unsigned n, const H5E_error2_t *e, void *data) {
	h5w_err *r = (h5w_err *)data;
	if (!r->found && e->desc != NULL) {
		strncpy(r->msg, e->desc, sizeof(r->msg) - 1);
		r->msg[sizeof(r->msg) - 1] = 0;
		r->found = 1;
	}
	return 0;
}

static void h5w_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static void h5w_msg(char *out, size_t n) {
	h5w_err r;
	memset(&r, 0, sizeof(r));
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5w_walk, &r);
	strncpy(out, r.msg, n - 1);
	out[n - 1] = 0;
	H5Eclear2(H5E_DEFAULT);
}

static hid_t h5w_open(const char *path, char *msg) {
	h5w_quiet();
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) h5w_msg(msg, 256);
	return f;
}

// h5w_deny_elink refuses every external link traversal (the callback runs before the
// library opens the link's target file).
static herr_t h5w_deny_elink(const char *parent_file, const char *parent_group, const char *child_file,
                             const char *child_object, unsigned *acc_flags, hid_t fapl, void *op_data) {
	return -1;
}

// h5w_lapl creates a link (or, with dataset set, dataset) access property list that denies
// external links; a dataset's also sets the chunk cache to nbytes (0: the library's default).
static hid_t h5w_lapl(int dataset, size_t nbytes) {
	h5w_quiet();
	hid_t p = H5Pcreate(dataset ? H5P_DATASET_ACCESS : H5P_LINK_ACCESS);
	if (p < 0) return p;
	if (H5Pset_elink_cb(p, h5w_deny_elink, NULL) < 0 ||
	    (dataset && nbytes > 0 && H5Pset_chunk_cache(p, 521, nbytes, 1.0) < 0)) {
		H5Pclose(p);
		return -1;
	}
	return p;
}

static int h5w_close_plist(hid_t p) { h5w_quiet(); return H5Pclose(p); }

static int h5w_close_file(hid_t f) { h5w_quiet(); return H5Fclose(f); }

// h5w_links checks every link on path, in order, before the next is traversed: 0 all are
// hard links or soft links to such paths, 1 one is missing, -1 error, -3 one is an external
// or user-defined link, or a soft link to a path through one (*bad: the length of the path
// up to that link).
static int h5w_links(hid_t f, hid_t lapl, const char *path, int depth, size_t *bad, char *msg) {
	char buf[1024], target[2048];
	size_t n = strlen(path);
	if (n >= sizeof(buf)) { strcpy(msg, "path too long"); return -1; }
	if (depth > 8) { strcpy(msg, "too many soft links"); return -1; }
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0) continue;
		memcpy(buf, path, i);
		buf[i] = 0;
		htri_t e = H5Lexists(f, buf, lapl);
		if (e < 0) { h5w_msg(msg, 256); return -1; }
		if (e == 0) return 1;
		H5L_info_t li;
		if (H5Lget_info(f, buf, &li, lapl) < 0) { h5w_msg(msg, 256); return -1; }
		if (li.type == H5L_TYPE_HARD) continue;
		if (li.type != H5L_TYPE_SOFT || li.u.val_size >= 1024) { *bad = i; return -3; }
		// A soft link: check the path it names (relative to the link's group).
		char val[1024];
		if (H5Lget_val(f, buf, val, sizeof(val), lapl) < 0) { h5w_msg(msg, 256); return -1; }
		val[sizeof(val) - 1] = 0;
		size_t dir = i;
		while (dir > 0 && buf[dir - 1] != '/') dir--;
		if (val[0] == '/' || dir == 0) snprintf(target, sizeof(target), "%s", val);
		else snprintf(target, sizeof(target), "%.*s%s", (int)dir, buf, val);
		size_t ignore;
		int r = h5w_links(f, lapl, target, depth + 1, &ignore, msg);
		if (r == -3) { *bad = i; return -3; }
		if (r != 0) return r;
	}
	return 0;
}

// h5w_kind: 0 missing, 1 group, 2 dataset, 3 other; -1 error, -3 a link on the path leads
// out of the file (see h5w_links).
static int h5w_kind(hid_t f, hid_t lapl, const char *path, size_t *bad, char *msg) {
	h5w_quiet();
	int r = h5w_links(f, lapl, path, 0, bad, msg);
	if (r == 1) return 0;
	if (r != 0) return r;
	hid_t o = H5Oopen(f, path, lapl);
	if (o < 0) { h5w_msg(msg, 256); return -1; }
	H5I_type_t t = H5Iget_type(o);
	H5Oclose(o);
	if (t == H5I_GROUP) return 1;
	if (t == H5I_DATASET) return 2;
	return 3;
}

static long long h5w_nlinks(hid_t f, hid_t lapl, const char *path, char *msg) {
	h5w_quiet();
	H5G_info_t info;
	if (H5Gget_info_by_name(f, path, &info, lapl) < 0) { h5w_msg(msg, 256); return -1; }
	return (long long)info.nlinks;
}

static long h5w_link_name(hid_t f, hid_t lapl, const char *path, unsigned long long i, char *out, size_t n, char *msg) {
	h5w_quiet();
	ssize_t r = H5Lget_name_by_idx(f, path, H5_INDEX_NAME, H5_ITER_INC, (hsize_t)i, out, n, lapl);
	if (r < 0) h5w_msg(msg, 256);
	return (long)r;
}

static hid_t h5w_open_dataset(hid_t f, hid_t dapl, const char *path, char *msg) {
	h5w_quiet();
	hid_t d = H5Dopen2(f, path, dapl);
	if (d < 0) h5w_msg(msg, 256);
	return d;
}

// h5w_storage describes where a dataset's values are: *layout 0 compact, 1 contiguous,
// 2 chunked, 3 virtual, 4 other; *external the number of external files; for a chunked
// dataset *chunk the bytes of one chunk as stored before filters (elements x type size).
static int h5w_storage(hid_t d, int *layout, int *external, unsigned long long *chunk, int *allocated, char *msg) {
	h5w_quiet();
	H5D_space_status_t st;
	if (H5Dget_space_status(d, &st) < 0) { h5w_msg(msg, 256); return -1; }
	*allocated = st == H5D_SPACE_STATUS_ALLOCATED; // chunked: counted below
	hid_t dcpl = H5Dget_create_plist(d);
	if (dcpl < 0) { h5w_msg(msg, 256); return -1; }
	H5D_layout_t l = H5Pget_layout(dcpl);
	*layout = l == H5D_COMPACT ? 0 : l == H5D_CONTIGUOUS ? 1 : l == H5D_CHUNKED ? 2 : l == H5D_VIRTUAL ? 3 : 4;
	*external = H5Pget_external_count(dcpl);
	*chunk = 0;
	if (l == H5D_CHUNKED) {
		hsize_t dims[32];
		int r = H5Pget_chunk(dcpl, 32, dims);
		hid_t t = H5Dget_type(d);
		if (r < 0 || t < 0) { h5w_msg(msg, 256); if (t >= 0) H5Tclose(t); H5Pclose(dcpl); return -1; }
		unsigned long long b = H5Tget_size(t);
		H5Tclose(t);
		for (int i = 0; i < r && i < 32; i++) {
			if (dims[i] != 0 && b > ~0ULL / dims[i]) { b = ~0ULL; break; }
			b *= dims[i];
		}
		*chunk = b;
		// Every chunk the dataspace covers must be stored (the library reports a filtered or
		// edge-chunked dataset as partly allocated, so count them).
		hid_t fs = H5Dget_space(d);
		hsize_t ext[32], want = 1, have = 0;
		int n = fs < 0 ? -1 : H5Sget_simple_extent_dims(fs, ext, NULL);
		if (n < 0 || n != r || H5Dget_num_chunks(d, fs, &have) < 0) { h5w_msg(msg, 256); if (fs >= 0) H5Sclose(fs); H5Pclose(dcpl); return -1; }
		H5Sclose(fs);
		for (int i = 0; i < n; i++) {
			hsize_t k = dims[i] ? (ext[i] + dims[i] - 1) / dims[i] : 0;
			want = k != 0 && want > ~(hsize_t)0 / k ? ~(hsize_t)0 : want * k;
		}
		*allocated = have >= want;
	}
	H5Pclose(dcpl);
	return *external < 0 ? -1 : 0;
}

static int h5w_close_dataset(hid_t d) { h5w_quiet(); return H5Dclose(d); }

// h5w_info fills the rank, dims (up to 2), class, size and sign of a dataset (or attribute
// when attr is set).
static int h5w_info(hid_t obj, int attr, int *rank, unsigned long long *dims, int *cls, size_t *size, int *sign, int *vlen, char *msg) {
	h5w_quiet();
	hid_t space = attr ? H5Aget_space(obj) : H5Dget_space(obj);
	hid_t type = attr ? H5Aget_type(obj) : H5Dget_type(obj);
	if (space < 0 || type < 0) { h5w_msg(msg, 256); if (space >= 0) H5Sclose(space); if (type >= 0) H5Tclose(type); return -1; }
	int r = H5Sget_simple_extent_ndims(space);
	hsize_t d[8] = {0};
	if (r < 0 || r > 8) { H5Sclose(space); H5Tclose(type); strcpy(msg, "unsupported dataspace"); return -1; }
	H5Sget_simple_extent_dims(space, d, NULL);
	*rank = r;
	dims[0] = r > 0 ? d[0] : 1;
	dims[1] = r > 1 ? d[1] : 1;
	H5T_class_t c = H5Tget_class(type);
	*cls = 0;
	if (c == H5T_INTEGER) *cls = 1;
	else if (c == H5T_FLOAT) *cls = 2;
	else if (c == H5T_STRING) *cls = 3;
	else if (c == H5T_ENUM) *cls = 4;
	*size = H5Tget_size(type);
	*sign = (c == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2) ? 1 : 0;
	*vlen = (c == H5T_STRING && H5Tis_variable_str(type) > 0) ? 1 : 0;
	H5Sclose(space);
	H5Tclose(type);
	return 0;
}

// mem types: 1 float32, 2 float64, 3 int64, 4 uint32, 5 native copy of the file type (enum).
static hid_t h5w_memtype(hid_t d, int which) {
	switch (which) {
	case 1: return H5Tcopy(H5T_NATIVE_FLOAT);
	case 2: return H5Tcopy(H5T_NATIVE_DOUBLE);
	case 3: return H5Tcopy(H5T_NATIVE_LLONG);
	case 4: return H5Tcopy(H5T_NATIVE_UINT);
	}
	hid_t ft = H5Dget_type(d);
	hid_t mt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
	H5Tclose(ft);
	return mt;
}

// h5w_read reads the hyperslab [off0, off0+n0) x [off1, off1+n1) (rank 1: the first pair
// only) converting to mem type `which`.
static int h5w_read(hid_t d, int rank, unsigned long long off0, unsigned long long n0,
                    unsigned long long off1, unsigned long long n1, int which, void *dst, char *msg) {
	h5w_quiet();
	hid_t fs = H5Dget_space(d);
	if (fs < 0) { h5w_msg(msg, 256); return -1; }
	hsize_t start[2] = {off0, off1}, count[2] = {n0, n1};
	if (rank > 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) { h5w_msg(msg, 256); H5Sclose(fs); return -1; }
	hid_t ms = H5Screate_simple(rank > 0 ? rank : 1, count, NULL);
	hid_t mt = h5w_memtype(d, which);
	herr_t r = H5Dread(d, mt, ms, rank > 0 ? fs : H5S_ALL, H5P_DEFAULT, dst);
	if (r < 0) h5w_msg(msg, 256);
	H5Tclose(mt);
	H5Sclose(ms);
	H5Sclose(fs);
	return r < 0 ? -1 : 0;
}

// A vlen budget counts the bytes the library allocates for variable-length strings during
// one read and fails the allocation that would pass the limit (a hostile file can point
// many strings at one large heap object).
typedef struct { unsigned long long used, limit; int over; } h5w_budget;

static void *h5w_budget_alloc(size_t size, void *info) {
	h5w_budget *b = (h5w_budget *)info;
	if (size > b->limit - b->used) { b->over = 1; return NULL; }
	b->used += size;
	return malloc(size);
}

static void h5w_budget_free(void *p, void *info) { free(p); }

// h5w_read_strings reads n strings from offset off of a 1-D string dataset (or attribute
// when attr is set, all of it) into *out (malloc'd, *outlen bytes): NUL-separated, each at
// most `size` bytes for fixed strings. The strings may take at most limit bytes, counted
// before the read where the library allows it (fixed strings, a dataset's variable-length
// strings through a bounded allocator) and after it otherwise (an attribute's, which the
// object header bounds). It returns 0, -1 (error) or -2 (over the limit).
static int h5w_read_strings(hid_t obj, int attr, unsigned long long off, unsigned long long n,
                            unsigned long long limit, char **out, unsigned long long *outlen, char *msg) {
	h5w_quiet();
	*out = NULL;
	*outlen = 0;
	hid_t ft = attr ? H5Aget_type(obj) : H5Dget_type(obj);
	hid_t fs = attr ? H5Aget_space(obj) : H5Dget_space(obj);
	if (ft < 0 || fs < 0) { h5w_msg(msg, 256); if (ft >= 0) H5Tclose(ft); if (fs >= 0) H5Sclose(fs); return -1; }
	int vlen = H5Tis_variable_str(ft) > 0;
	size_t size = H5Tget_size(ft);
	int rank = H5Sget_simple_extent_ndims(fs);
	hsize_t start[1] = {off}, count[1] = {n};
	if (!attr && rank > 0) {
		H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
	}
	hid_t ms = H5Screate_simple(1, count, NULL);
	hid_t mt = H5Tcopy(H5T_C_S1);
	if (vlen) H5Tset_size(mt, H5T_VARIABLE); else { H5Tset_size(mt, size); H5Tset_strpad(mt, H5T_STR_NULLPAD); }
	H5Tset_cset(mt, H5Tget_cset(ft));
	int ret = -1;
	if (vlen) {
		h5w_budget budget = {0, limit, 0};
		hid_t dxpl = H5P_DEFAULT;
		if (!attr) {
			dxpl = H5Pcreate(H5P_DATASET_XFER);
			if (dxpl >= 0) H5Pset_vlen_mem_manager(dxpl, h5w_budget_alloc, &budget, h5w_budget_free, NULL);
		}
		char **ptrs = (char **)calloc(n ? n : 1, sizeof(char *));
		herr_t r = dxpl < 0 || ptrs == NULL ? -1 :
			attr ? H5Aread(obj, mt, ptrs) : H5Dread(obj, mt, ms, rank > 0 ? fs : H5S_ALL, dxpl, ptrs);
		if (r < 0) {
			if (budget.over) ret = -2; else h5w_msg(msg, 256);
			H5Eclear2(H5E_DEFAULT);
		} else {
			unsigned long long total = 0;
			for (unsigned long long i = 0; i < n; i++) total += (ptrs[i] ? strlen(ptrs[i]) : 0) + 1;
			if (total > limit) ret = -2;
			else if ((*out = (char *)malloc(total ? total : 1)) == NULL) strcpy(msg, "out of memory");
			else {
				char *p = *out;
				for (unsigned long long i = 0; i < n; i++) {
					size_t l = ptrs[i] ? strlen(ptrs[i]) : 0;
					if (l) memcpy(p, ptrs[i], l);
					p[l] = 0;
					p += l + 1;
				}
				*outlen = total;
				ret = 0;
			}
		}
		if (ptrs != NULL) {
			// Free what was allocated (a failed read leaves NULLs behind the last string).
			H5Dvlen_reclaim(mt, ms, dxpl < 0 ? H5P_DEFAULT : dxpl, ptrs);
			free(ptrs);
		}
		if (dxpl >= 0 && dxpl != H5P_DEFAULT) H5Pclose(dxpl);
	} else if (size == 0 || n > limit / size) {
		ret = -2;
	} else {
		char *buf = (char *)malloc(size * (n ? n : 1));
		herr_t r = buf == NULL ? -1 : attr ? H5Aread(obj, mt, buf) : H5Dread(obj, mt, ms, rank > 0 ? fs : H5S_ALL, H5P_DEFAULT, buf);
		if (r < 0) { h5w_msg(msg, 256); }
		else {
			unsigned long long total = 0;
			for (unsigned long long i = 0; i < n; i++) total += strnlen(buf + i * size, size) + 1;
			if ((*out = (char *)malloc(total ? total : 1)) == NULL) strcpy(msg, "out of memory");
			else {
				char *p = *out;
				for (unsigned long long i = 0; i < n; i++) {
					size_t l = strnlen(buf + i * size, size);
					memcpy(p, buf + i * size, l);
					p[l] = 0;
					p += l + 1;
				}
				*outlen = total;
				ret = 0;
			}
		}
		free(buf);
	}
	H5Tclose(mt);
	H5Sclose(ms);
	H5Sclose(fs);
	H5Tclose(ft);
	return ret;
}

static hid_t h5w_open_attr(hid_t f, hid_t lapl, const char *obj, const char *name, char *msg) {
	h5w_quiet();
	htri_t e = H5Aexists_by_name(f, obj, name, lapl);
	if (e <= 0) { if (e < 0) h5w_msg(msg, 256); return e < 0 ? -1 : -2; }
	hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, lapl);
	if (a < 0) h5w_msg(msg, 256);
	return a;
}

static int h5w_read_attr(hid_t a, int which, void *dst, char *msg) {
	h5w_quiet();
	hid_t mt = which == 3 ? H5Tcopy(H5T_NATIVE_LLONG) : H5Tcopy(H5T_NATIVE_DOUBLE);
	herr_t r = H5Aread(a, mt, dst);
	if (r < 0) h5w_msg(msg, 256);
	H5Tclose(mt);
	return r < 0 ? -1 : 0;
}

static int h5w_close_attr(hid_t a) { h5w_quiet(); return H5Aclose(a); }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
)

// Available reports whether libhdf5 is compiled in.
func Available() bool { return true }

type msgBuf [256]C.char

func (m *msgBuf) String() string { return C.GoString(&m[0]) }

// File is an HDF5 file open for reading.
type File struct {
	id   C.hid_t
	path string
	os   *os.File // the descriptor the library opened through /proc/self/fd (Linux)
	lapl C.hid_t  // link access: external links denied
	dapl C.hid_t  // dataset access: external links denied, the default chunk cache

	mu        sync.Mutex
	cacheUsed int64 // chunk cache bytes granted to open datasets
}

// Open opens path read-only. The path must name a regular file: it is opened without
// blocking and checked first (a named pipe would block open(2) forever), and on Linux the
// library opens that very descriptor. External links are never followed.
func Open(path string) (*File, error) {
	of, _, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", ErrHDF5, quote.S(path), err)
	}
	name := path
	if runtime.GOOS == "linux" {
		fd := "/proc/self/fd/" + strconv.Itoa(int(of.Fd()))
		if _, err := os.Stat(fd); err == nil {
			name = fd
		}
	}
	cp := C.CString(name)
	defer C.free(unsafe.Pointer(cp))
	var m msgBuf
	f := &File{id: -1, path: path, os: of, lapl: C.h5w_lapl(0, 0), dapl: C.h5w_lapl(1, 0)}
	if f.lapl < 0 || f.dapl < 0 {
		f.Close()
		return nil, opErr("open", path, "cannot create property lists")
	}
	if f.id = C.h5w_open(cp, &m[0]); f.id < 0 {
		f.Close()
		return nil, opErr("open", path, m.String())
	}
	return f, nil
}

// Close closes the file.
func (f *File) Close() error {
	var err error
	if f.id >= 0 {
		if C.h5w_close_file(f.id) < 0 {
			err = opErr("close", f.path, "")
		}
		f.id = -1
	}
	for _, p := range []*C.hid_t{&f.lapl, &f.dapl} {
		if *p >= 0 {
			C.h5w_close_plist(*p)
			*p = -1
		}
	}
	if f.os != nil {
		f.os.Close()
		f.os = nil
	}
	return err
}

// where names an object of the file in errors: the file's path and the object's path
// (shortened and escaped: both may come from the input).
func (f *File) where(path string) string {
	return quote.S(f.path) + ":" + quote.Q(path)
}

// Kind returns what path names: KindNone when it does not exist. A path through an external
// (or user-defined) link is an error wrapping ErrExternal, naming the link.
func (f *File) Kind(path string) (Kind, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var m msgBuf
	var bad C.size_t
	switch C.h5w_kind(f.id, f.lapl, cp, &bad, &m[0]) {
	case 0:
		return KindNone, nil
	case 1:
		return KindGroup, nil
	case 2:
		return KindDataset, nil
	case 3:
		return KindNone, opErr("open", f.where(path), "neither a group nor a dataset")
	case -3:
		link := path[:min(int(bad), len(path))]
		return KindNone, fmt.Errorf("%w: %s: %s is an external link or leads through one (links to other files are not followed)", ErrExternal, f.where(path), quote.Q(link))
	}
	return KindNone, opErr("open", f.where(path), m.String())
}

// List returns the names of the links in a group, sorted by name.
func (f *File) List(group string) ([]string, error) {
	cp := C.CString(group)
	defer C.free(unsafe.Pointer(cp))
	var m msgBuf
	n := C.h5w_nlinks(f.id, f.lapl, cp, &m[0])
	if n < 0 {
		return nil, opErr("list", f.where(group), m.String())
	}
	if n > MaxListLinks {
		return nil, opErr("list", f.where(group), fmt.Sprintf("%d links (at most %d are read)", n, MaxListLinks))
	}
	names := make([]string, 0, int(n))
	buf := make([]byte, 4096)
	for i := range int64(n) {
		l := C.h5w_link_name(f.id, f.lapl, cp, C.ulonglong(i), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &m[0])
		if l < 0 {
			return nil, opErr("list", f.where(group), m.String())
		}
		names = append(names, string(buf[:min(int(l), len(buf)-1)]))
	}
	return names, nil
}

// Dataset is an open dataset.
type Dataset struct {
	id    C.hid_t
	name  string
	f     *File
	cache int64 // chunk cache bytes granted (returned on Close)
	// Dims are the dataset's dimensions (Rank 0: a scalar, Dims {1, 1}).
	Dims [2]int64
	Rank int
	Type Type
	vlen bool
}

// OpenDataset opens a dataset of rank 0, 1 or 2 whose values are in the file: a path through
// an external link, a dataset with external storage and a virtual dataset are refused with
// ErrExternal, a chunked dataset whose chunk holds more than MaxChunkBytes with
// ErrChunkTooLarge. A chunked dataset gets a chunk cache that holds one chunk, within the
// file's CacheBytes (beyond it, a chunk is inflated again for each read).
func (f *File) OpenDataset(path string) (*Dataset, error) {
	name := f.where(path)
	switch k, err := f.Kind(path); {
	case err != nil:
		return nil, err
	case k == KindNone:
		return nil, fmt.Errorf("%w: dataset %s", ErrNotFound, name)
	case k != KindDataset:
		return nil, opErr("open dataset", name, "not a dataset")
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var m msgBuf
	id := C.h5w_open_dataset(f.id, f.dapl, cp, &m[0])
	if id < 0 {
		return nil, opErr("open dataset", name, m.String())
	}
	d := &Dataset{id: id, name: name, f: f}
	var layout, external, allocated C.int
	var chunk C.ulonglong
	if C.h5w_storage(id, &layout, &external, &chunk, &allocated, &m[0]) < 0 {
		d.Close()
		return nil, opErr("describe", name, m.String())
	}
	switch {
	case external > 0:
		d.Close()
		return nil, fmt.Errorf("%w: dataset %s stores its values in %d external file(s)", ErrExternal, name, external)
	case layout == 3:
		d.Close()
		return nil, fmt.Errorf("%w: dataset %s is a virtual dataset (its values are in other datasets or files)", ErrExternal, name)
	case layout == 4:
		d.Close()
		return nil, opErr("open dataset", name, "unknown storage layout")
	case uint64(chunk) > MaxChunkBytes:
		d.Close()
		return nil, fmt.Errorf("%w: dataset %s has chunks of %d bytes (the limit is %d)", ErrChunkTooLarge, name, uint64(chunk), MaxChunkBytes)
	case layout == 2 && int64(chunk) > defaultChunkCache:
		// Reopen with a cache that keeps the chunk between reads, if the budget allows.
		if grant := f.grantCache(int64(chunk)); grant > 0 {
			C.h5w_close_dataset(id)
			d.id = -1
			dapl := C.h5w_lapl(1, C.size_t(grant))
			if dapl >= 0 {
				d.id = C.h5w_open_dataset(f.id, dapl, cp, &m[0])
				C.h5w_close_plist(dapl)
			}
			if d.id < 0 {
				f.releaseCache(grant)
				return nil, opErr("open dataset", name, m.String())
			}
			d.cache = grant
		}
	}
	if err := info(d.id, false, name, &d.Rank, &d.Dims, &d.Type, &d.vlen); err != nil {
		d.Close()
		return nil, err
	}
	if allocated == 0 && d.Dims[0] > 0 && d.Dims[1] > 0 && layout != 0 {
		// Values never written read as the fill value: a few bytes could declare any size.
		d.Close()
		return nil, fmt.Errorf("%w: dataset %s declares %d x %d values but stores only part of them", ErrNotStored, name, d.Dims[0], d.Dims[1])
	}
	if d.Rank > 2 {
		d.Close()
		return nil, opErr("open dataset", name, fmt.Sprintf("rank %d (1 or 2 expected)", d.Rank))
	}
	return d, nil
}

func info(id C.hid_t, attr bool, name string, rank *int, dims *[2]int64, t *Type, vlen *bool) error {
	var r, cls, sign, vl C.int
	var size C.size_t
	var dd [2]C.ulonglong
	var m msgBuf
	a := C.int(0)
	if attr {
		a = 1
	}
	if C.h5w_info(id, a, &r, &dd[0], &cls, &size, &sign, &vl, &m[0]) < 0 {
		return opErr("describe", name, m.String())
	}
	*rank = int(r)
	dims[0], dims[1] = int64(dd[0]), int64(dd[1])
	*t = Type{Class: Class(cls), Size: int(size), Signed: sign != 0}
	*vlen = vl != 0
	return nil
}

// Len returns the number of elements of a 1-D dataset (Dims[0]).
func (d *Dataset) Len() int64 { return d.Dims[0] }

// grantCache reserves n bytes of the file's chunk cache budget, or none (0) when they do
// not fit.
func (f *File) grantCache(n int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cacheUsed+n > CacheBytes {
		return 0
	}
	f.cacheUsed += n
	return n
}

func (f *File) releaseCache(n int64) {
	f.mu.Lock()
	f.cacheUsed -= n
	f.mu.Unlock()
}

// Close closes the dataset.
func (d *Dataset) Close() error {
	if d.cache > 0 {
		d.f.releaseCache(d.cache)
		d.cache = 0
	}
	if d.id < 0 {
		return nil
	}
	r := C.h5w_close_dataset(d.id)
	d.id = -1
	if r < 0 {
		return opErr("close", d.name, "")
	}
	return nil
}

func (d *Dataset) check(off, n int64) error {
	if off < 0 || n < 0 || off+n > d.Dims[0] {
		return opErr("read", d.name, fmt.Sprintf("range [%d, %d) of %d", off, off+n, d.Dims[0]))
	}
	return nil
}

func (d *Dataset) read(off, n, off1, n1 int64, which C.int, dst unsafe.Pointer) error {
	if n == 0 || n1 == 0 {
		return nil
	}
	var m msgBuf
	if C.h5w_read(d.id, C.int(d.Rank), C.ulonglong(off), C.ulonglong(n), C.ulonglong(off1), C.ulonglong(n1), which, dst, &m[0]) < 0 {
		return opErr("read", d.name, m.String())
	}
	return nil
}

// ReadFloat32 reads elements [off, off+len(dst)) of a 1-D numeric dataset as float32.
func (d *Dataset) ReadFloat32(off int64, dst []float32) error {
	if err := d.numeric(off, int64(len(dst))); err != nil || len(dst) == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	return d.read(off, int64(len(dst)), 0, 1, 1, unsafe.Pointer(&dst[0]))
}

// ReadFloat64 reads elements [off, off+len(dst)) of a 1-D numeric dataset as float64.
func (d *Dataset) ReadFloat64(off int64, dst []float64) error {
	if err := d.numeric(off, int64(len(dst))); err != nil || len(dst) == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	return d.read(off, int64(len(dst)), 0, 1, 2, unsafe.Pointer(&dst[0]))
}

// ReadInt64 reads elements [off, off+len(dst)) of a 1-D integer (or enum) dataset as int64.
func (d *Dataset) ReadInt64(off int64, dst []int64) error {
	if err := d.check(off, int64(len(dst))); err != nil || len(dst) == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	if d.Type.Class == ClassEnum {
		// Enums convert only to enums: read the native enum, then widen its integers.
		raw := make([]byte, len(dst)*d.Type.Size)
		if err := d.read(off, int64(len(dst)), 0, 1, 5, unsafe.Pointer(&raw[0])); err != nil {
			return err
		}
		for i := range dst {
			dst[i] = signExtend(raw[i*d.Type.Size:(i+1)*d.Type.Size], true)
		}
		return nil
	}
	if d.Type.Class != ClassInteger && d.Type.Class != ClassFloat {
		return opErr("read", d.name, fmt.Sprintf("%s elements are not numbers", d.Type.Class))
	}
	return d.read(off, int64(len(dst)), 0, 1, 3, unsafe.Pointer(&dst[0]))
}

func signExtend(b []byte, signed bool) int64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i]) // little-endian host
	}
	if signed && len(b) < 8 && b[len(b)-1]&0x80 != 0 {
		v |= ^uint64(0) << (8 * len(b))
	}
	return int64(v)
}

// ReadUint32 reads elements [off, off+len(dst)) of a 1-D integer dataset as uint32. HDF5
// clips values that do not fit (a negative index reads as 0): callers that need every value
// exact read int64.
func (d *Dataset) ReadUint32(off int64, dst []uint32) error {
	if err := d.numeric(off, int64(len(dst))); err != nil || len(dst) == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	return d.read(off, int64(len(dst)), 0, 1, 4, unsafe.Pointer(&dst[0]))
}

// ReadRowsFloat32 reads rows [row, row+n) of a 2-D numeric dataset as float32 (row-major:
// n × Dims[1] values).
func (d *Dataset) ReadRowsFloat32(row, n int64, dst []float32) error {
	if d.Rank != 2 {
		return opErr("read", d.name, fmt.Sprintf("rank %d, want 2", d.Rank))
	}
	if err := d.numeric(row, n); err != nil || n == 0 {
		return err
	}
	if int64(len(dst)) != n*d.Dims[1] {
		return opErr("read", d.name, "destination size")
	}
	defer runtime.KeepAlive(dst)
	return d.read(row, n, 0, d.Dims[1], 1, unsafe.Pointer(&dst[0]))
}

// ReadBlockFloat32 reads rows [row, row+n) × columns [col, col+m) of a 2-D numeric dataset
// as float32, row-major: n × m values.
func (d *Dataset) ReadBlockFloat32(row, n, col, m int64, dst []float32) error {
	if d.Rank != 2 || col < 0 || m < 0 || col+m > d.Dims[1] || int64(len(dst)) != n*m {
		return opErr("read", d.name, "block range")
	}
	if err := d.numeric(row, n); err != nil || n == 0 || m == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	return d.read(row, n, col, m, 1, unsafe.Pointer(&dst[0]))
}

// ReadColsFloat32 reads columns [col, col+n) of a 2-D numeric dataset (all rows) as float32,
// row-major: Dims[0] × n values.
func (d *Dataset) ReadColsFloat32(col, n int64, dst []float32) error {
	if d.Rank != 2 || col < 0 || col+n > d.Dims[1] || int64(len(dst)) != n*d.Dims[0] {
		return opErr("read", d.name, "column range")
	}
	if err := d.numeric(0, 0); err != nil || n == 0 {
		return err
	}
	defer runtime.KeepAlive(dst)
	return d.read(0, d.Dims[0], col, n, 1, unsafe.Pointer(&dst[0]))
}

func (d *Dataset) numeric(off, n int64) error {
	if d.Type.Class != ClassInteger && d.Type.Class != ClassFloat {
		return opErr("read", d.name, fmt.Sprintf("%s elements are not numbers", d.Type.Class))
	}
	return d.check(off, n)
}

// ReadStrings reads strings [off, off+n) of a 1-D string dataset.
func (d *Dataset) ReadStrings(off, n int64) ([]string, error) {
	if d.Type.Class != ClassString {
		return nil, opErr("read", d.name, fmt.Sprintf("%s elements are not strings", d.Type.Class))
	}
	if err := d.check(off, n); err != nil || n == 0 {
		return nil, err
	}
	return readStrings(d.id, false, off, n, MaxStringBytes, MaxStringBytes, d.name)
}

// readStrings reads n strings (a dataset's from off, or an attribute's) taking at most limit
// bytes with their terminators; more is an error wrapping ErrTooLarge that states the bound
// as shown.
func readStrings(id C.hid_t, attr bool, off, n, limit, shown int64, name string) ([]string, error) {
	if n > limit/8 { // the library's pointer array
		return nil, fmt.Errorf("%w: %s: %d strings (at most %d bytes are read)", ErrTooLarge, name, n, shown)
	}
	a := C.int(0)
	if attr {
		a = 1
	}
	var buf *C.char
	var used C.ulonglong
	var m msgBuf
	switch C.h5w_read_strings(id, a, C.ulonglong(off), C.ulonglong(n), C.ulonglong(limit), &buf, &used, &m[0]) {
	case 0:
	case -2:
		return nil, fmt.Errorf("%w: %s: longer than %d bytes", ErrTooLarge, name, shown)
	default:
		return nil, opErr("read strings", name, m.String())
	}
	s := C.GoStringN(buf, C.int(used))
	C.free(unsafe.Pointer(buf))
	out := strings.Split(s, "\x00")
	return out[:n], nil
}

// Attr describes an attribute.
type Attr struct {
	Type Type
	Rank int
	Len  int64 // elements (1 for a scalar)
}

// AttrStrings reads a string attribute (scalar or 1-D) of the object at obj; ErrNotFound
// when it does not exist. An empty non-string array (h5py writes [] as float64) reads as no
// strings. The strings may take at most maxBytes bytes (one more per string for its
// terminator); a longer attribute is an error wrapping ErrTooLarge that quotes none of it.
func (f *File) AttrStrings(obj, name string, maxBytes int64) ([]string, error) {
	a, at, err := f.openAttr(obj, name)
	if err != nil {
		return nil, err
	}
	defer C.h5w_close_attr(a)
	if at.Type.Class != ClassString {
		if at.Len == 0 {
			return nil, nil
		}
		return nil, opErr("read attribute", f.attrWhere(obj, name), fmt.Sprintf("%s, not strings", at.Type.Class))
	}
	return readStrings(a, true, 0, at.Len, maxBytes+at.Len, maxBytes, f.attrWhere(obj, name))
}

// AttrInts reads a numeric attribute (scalar or 1-D) as int64 values.
func (f *File) AttrInts(obj, name string) ([]int64, error) {
	a, at, err := f.openAttr(obj, name)
	if err != nil {
		return nil, err
	}
	defer C.h5w_close_attr(a)
	if at.Type.Class != ClassInteger && at.Type.Class != ClassFloat && at.Type.Class != ClassEnum {
		return nil, opErr("read attribute", f.attrWhere(obj, name), fmt.Sprintf("%s, not numbers", at.Type.Class))
	}
	out := make([]int64, max(at.Len, 1))
	var m msgBuf
	if at.Type.Class == ClassEnum {
		return nil, opErr("read attribute", f.attrWhere(obj, name), "enum attributes are not supported")
	}
	if C.h5w_read_attr(a, 3, unsafe.Pointer(&out[0]), &m[0]) < 0 {
		return nil, opErr("read attribute", f.attrWhere(obj, name), m.String())
	}
	return out[:at.Len], nil
}

func (f *File) attrWhere(obj, name string) string {
	return f.where(obj) + "@" + quote.Q(name)
}

func (f *File) openAttr(obj, name string) (C.hid_t, Attr, error) {
	where := f.attrWhere(obj, name)
	// Check the links to the object (an external link is refused, not followed).
	if k, err := f.Kind(obj); err != nil {
		return -1, Attr{}, err
	} else if k == KindNone {
		return -1, Attr{}, fmt.Errorf("%w: attribute %s", ErrNotFound, where)
	}
	co, cn := C.CString(obj), C.CString(name)
	defer C.free(unsafe.Pointer(co))
	defer C.free(unsafe.Pointer(cn))
	var m msgBuf
	a := C.h5w_open_attr(f.id, f.lapl, co, cn, &m[0])
	if a == -2 {
		return -1, Attr{}, fmt.Errorf("%w: attribute %s", ErrNotFound, where)
	}
	if a < 0 {
		return -1, Attr{}, opErr("open attribute", where, m.String())
	}
	var at Attr
	var dims [2]int64
	var vlen bool
	if err := info(a, true, where, &at.Rank, &dims, &at.Type, &vlen); err != nil {
		C.h5w_close_attr(a)
		return -1, Attr{}, err
	}
	at.Len = dims[0]
	if at.Rank == 0 {
		at.Len = 1
	}
	if at.Rank > 1 || at.Len > MaxAttrElements {
		C.h5w_close_attr(a)
		return -1, Attr{}, fmt.Errorf("%w: attribute %s: rank %d, %d elements (at most %d in one dimension are read)", ErrTooLarge, where, at.Rank, at.Len, MaxAttrElements)
	}
	return a, at, nil
}
