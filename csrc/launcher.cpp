// tilec._launcher: the launch hot path.
//
// Everything a kernel launch does per call lives here: convert each Python argument to
// the bytes of its kernel parameter (per a one-letter type code precomputed from the
// kernel's signature), then call cuLaunchKernel. Loading modules, querying devices and
// the like happen once per kernel and stay in Python (tilec/runtime/driver.py).
//
// The extension must import on machines without a GPU or a CUDA toolkit (CI builds and
// tests there), so it neither links against libcuda nor includes cuda.h: the driver is
// opened with dlopen on first use and the handful of entry points it needs are declared
// below, with the symbol names cuda.h maps them to.
//
// Type codes (one per argument):
//   P  pointer: int address, None (0), object with data_ptr() (torch) or
//      __cuda_array_interface__ (CuPy, Numba)
//   b  int8 / bool     B  uint8      h  int16    H  uint16
//   i  int32           I  uint32     l  int64    L  uint64
//   e  fp16            E  bf16       f  fp32     d  fp64
//   M  a TMA tensor map, passed by value (128 bytes, 64-aligned): bytes, an object
//      with map_bytes() (runtime/tma.py's TensorMap), or None (zeros)
// Errors name the argument by index, or by name when a `names` tuple is given.
//
// Two entry points launch: `launch(function, grid..., codes, args, ...)`, which takes
// everything at every call, and `Launcher`, made once per loaded kernel with what never
// changes (function, block, shared memory, codes, names, context, and which of the @jit
// function's arguments are kernel parameters), so that a launch is one vectorcall
// `launcher(grid_x, grid_y, grid_z, stream, args)` with no per-call parsing of those.
// `GridCall` is what `kernel[grid]` returns: it passes the grid and the launch's
// arguments to the generated launcher (runtime/jit.py) and reports arguments that do
// not bind to the kernel's parameters.
#include <pybind11/pybind11.h>

#include <dlfcn.h>
#include <structmember.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// ----------------------------------------------------------------------------------
// The CUDA driver API, as far as the launcher uses it.

using CUresult = int;
using CUcontext = void*;
using CUfunction = void*;
using CUstream = void*;
constexpr CUresult CUDA_SUCCESS = 0;

// cuda.h's CUlaunchAttribute and CUlaunchConfig (CUDA 12), as far as used here.
constexpr int kAttributeCooperative = 2;                       // CU_LAUNCH_ATTRIBUTE_COOPERATIVE
constexpr int kAttributeProgrammaticSerialization = 6;         // ..._PROGRAMMATIC_STREAM_SERIALIZATION
struct LaunchAttribute {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int value;  // cooperative / programmaticStreamSerializationAllowed
    } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");
struct LaunchConfig {
    unsigned grid_x, grid_y, grid_z;
    unsigned block_x, block_y, block_z;
    unsigned shared_bytes;
    CUstream stream;
    LaunchAttribute* attributes;
    unsigned n_attributes;
};

// Launch flags (the launcher's optional sixth argument).
constexpr unsigned kLaunchCooperative = 1;   // launch_cooperative_grid: every program resident at once
constexpr unsigned kLaunchDependent = 2;     // launch_pdl: may start before the previous kernel ends

struct Driver {
    bool loaded = false;  // libcuda opened, every entry point found, cuInit(0) succeeded
    std::string error;    // why not, when !loaded
    CUresult (*cuInit)(unsigned int) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
    CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
    CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;  // cuda.h: cuCtxPushCurrent_v2
    CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;  // cuda.h: cuCtxPopCurrent_v2
    CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                               unsigned int, unsigned int, unsigned int, CUstream, void**,
                               void**) = nullptr;
    // For launches with attributes (cooperative, programmatic dependent launch); null
    // on drivers older than CUDA 12, where only such launches fail.
    CUresult (*cuLaunchKernelEx)(const LaunchConfig*, CUfunction, void**, void**) = nullptr;
};


template <typename Fn>
bool resolve(void* library, const char* symbol, Fn& out, std::string& error) {
    out = reinterpret_cast<Fn>(dlsym(library, symbol));
    if (out == nullptr) error = std::string("libcuda lacks ") + symbol;
    return out != nullptr;
}

Driver open_driver() {
    Driver d;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* why = dlerror();
        d.error = std::string("cannot load the CUDA driver: ") + (why ? why : "libcuda.so.1 not found");
        return d;
    }
    bool ok = resolve(library, "cuInit", d.cuInit, d.error) &&
              resolve(library, "cuGetErrorName", d.cuGetErrorName, d.error) &&
              resolve(library, "cuGetErrorString", d.cuGetErrorString, d.error) &&
              resolve(library, "cuCtxGetCurrent", d.cuCtxGetCurrent, d.error) &&
              resolve(library, "cuCtxPushCurrent_v2", d.cuCtxPushCurrent, d.error) &&
              resolve(library, "cuCtxPopCurrent_v2", d.cuCtxPopCurrent, d.error) &&
              resolve(library, "cuLaunchKernel", d.cuLaunchKernel, d.error);
    if (!ok) return d;
    d.cuLaunchKernelEx = reinterpret_cast<decltype(d.cuLaunchKernelEx)>(dlsym(library, "cuLaunchKernelEx"));
    CUresult status = d.cuInit(0);
    if (status != CUDA_SUCCESS) {
        const char* name = nullptr;
        d.cuGetErrorName(status, &name);
        d.error = std::string("cuInit failed: ") + (name ? name : std::to_string(status));
        return d;
    }
    d.loaded = true;
    return d;
}

// Opened once, on first use (thread-safe: C++11 static initialisation).
const Driver& driver() {
    static const Driver instance = open_driver();
    return instance;
}

// Sets a Python exception and unwinds to pybind11, which re-raises it in Python.
[[noreturn]] void fail(PyObject* type, const std::string& message) {
    PyErr_SetString(type, message.c_str());
    throw py::error_already_set();
}

[[noreturn]] void raise_cuda(const Driver& d, const char* call, CUresult status) {
    const char* name = nullptr;
    const char* text = nullptr;
    d.cuGetErrorName(status, &name);
    d.cuGetErrorString(status, &text);
    fail(PyExc_RuntimeError, std::string(call) + " failed: " + (name ? name : std::to_string(status)) +
                                  " (" + (text ? text : "unknown error") + ")");
}

// ----------------------------------------------------------------------------------
// Argument conversion.

// Interned attribute names, created at module import.
PyObject* kDataPtr = nullptr;
PyObject* kIsCuda = nullptr;
PyObject* kIsPinned = nullptr;
PyObject* kMapBytes = nullptr;
PyObject* kCudaArrayInterface = nullptr;
PyObject* kArrayInterface = nullptr;

// getattr(obj, name, None) without raising (and paying for) an AttributeError.
// Returns a new reference or nullptr; other errors propagate.
PyObject* optional_attr(PyObject* obj, PyObject* name) {
    PyObject* result = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
    if (PyObject_GetOptionalAttr(obj, name, &result) < 0) throw py::error_already_set();
#else
    if (_PyObject_LookupAttr(obj, name, &result) < 0) throw py::error_already_set();
#endif
    return result;
}

// How an argument is named in error messages: "argument 3" or "argument 'n'".
struct Label {
    size_t index;
    PyObject* names;  // a tuple (or list) of str, or nullptr
    std::string str() const {
        PyObject* name_obj = nullptr;
        if (names != nullptr && PyTuple_Check(names) && index < size_t(PyTuple_GET_SIZE(names)))
            name_obj = PyTuple_GET_ITEM(names, index);
        else if (names != nullptr && PyList_Check(names) && index < size_t(PyList_GET_SIZE(names)))
            name_obj = PyList_GET_ITEM(names, index);
        if (name_obj != nullptr) {
            const char* name = PyUnicode_AsUTF8(name_obj);
            if (name != nullptr) return std::string("argument '") + name + "'";
            PyErr_Clear();
        }
        return "argument " + std::to_string(index);
    }
};

std::string repr(PyObject* obj) {
    py::str text = py::repr(py::handle(obj));
    std::string s = text;
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string type_name(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

[[noreturn]] void raise_host_array(const Label& label, PyObject* obj) {
    fail(PyExc_ValueError, label.str() + " is a host (CPU) tensor; a GPU kernel needs device memory (got " +
                                type_name(obj) + "; move it to the GPU first, e.g. with .cuda())");
}

// Whether a host tensor is in pinned (page-locked) memory: `obj.is_pinned()` is True.
bool is_pinned(PyObject* obj) {
    py::object method = py::reinterpret_steal<py::object>(optional_attr(obj, kIsPinned));
    if (!method) return false;
    PyObject* result = PyObject_CallNoArgs(method.ptr());
    if (result == nullptr) {
        PyErr_Clear();
        return false;
    }
    const bool pinned = result == Py_True;
    Py_DECREF(result);
    return pinned;
}

// A Python int as a 64-bit device address.
uint64_t to_address(PyObject* value, const Label& label, const char* source) {
    if (!PyLong_Check(value) || PyBool_Check(value))
        fail(PyExc_TypeError, label.str() + ": " + source + " is a " + type_name(value) + ", not an int address");
    unsigned long long address = PyLong_AsUnsignedLongLong(value);
    if (address == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(PyExc_OverflowError, label.str() + ": " + repr(value) + " is not a 64-bit device address");
    }
    return address;
}

uint64_t to_pointer(PyObject* obj, const Label& label) {
    if (obj == Py_None) return 0;
    if (PyLong_Check(obj) && !PyBool_Check(obj)) return to_address(obj, label, "the value");
    // torch tensors: refuse host tensors but pinned ones (page-locked host memory is
    // mapped into the GPU's address space at the same address), then data_ptr().
    if (py::object data_ptr = py::reinterpret_steal<py::object>(optional_attr(obj, kDataPtr))) {
        py::object is_cuda = py::reinterpret_steal<py::object>(optional_attr(obj, kIsCuda));
        if (is_cuda && is_cuda.ptr() == Py_False && !is_pinned(obj)) raise_host_array(label, obj);
        py::object address = data_ptr();
        return to_address(address.ptr(), label, "data_ptr()");
    }
    // CuPy, Numba, ...: __cuda_array_interface__["data"][0]
    if (py::object cai = py::reinterpret_steal<py::object>(optional_attr(obj, kCudaArrayInterface))) {
        py::object data = cai["data"];
        py::object address = data[py::int_(0)];
        return to_address(address.ptr(), label, "__cuda_array_interface__['data'][0]");
    }
    py::object is_cuda = py::reinterpret_steal<py::object>(optional_attr(obj, kIsCuda));
    py::object host_interface = py::reinterpret_steal<py::object>(optional_attr(obj, kArrayInterface));
    if ((is_cuda && is_cuda.ptr() == Py_False) || host_interface) raise_host_array(label, obj);
    fail(PyExc_TypeError, label.str() + ": expected a GPU array (torch tensor or object with "
                                         "__cuda_array_interface__), an int address or None, got " +
                               type_name(obj));
}

// An integer argument in [lo, hi]; `type` names the parameter type for messages.
// uint64 goes through `to_uint64` since its range does not fit in long long.
long long to_int(PyObject* obj, const Label& label, const char* type, long long lo, long long hi) {
    if (!PyLong_Check(obj) && !PyIndex_Check(obj))  // PyIndex_Check: NumPy integers
        fail(PyExc_TypeError, label.str() + ": expected an int for " + type + ", got " + type_name(obj));
    py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!number) throw py::error_already_set();
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0 || value < lo || value > hi)
        fail(PyExc_OverflowError, label.str() + ": " + repr(obj) + " does not fit in " + type);
    return value;
}

uint64_t to_uint64(PyObject* obj, const Label& label) {
    if (!PyLong_Check(obj) && !PyIndex_Check(obj))
        fail(PyExc_TypeError, label.str() + ": expected an int for uint64, got " + type_name(obj));
    py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!number) throw py::error_already_set();
    unsigned long long value = PyLong_AsUnsignedLongLong(number.ptr());  // raises for < 0 and >= 2**64
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(PyExc_OverflowError, label.str() + ": " + repr(obj) + " does not fit in uint64");
    }
    return value;
}

double to_double(PyObject* obj, const Label& label, const char* type) {
    if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);
    double value = PyFloat_AsDouble(obj);  // ints, NumPy scalars, anything with __float__
    if (value == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            fail(PyExc_OverflowError, label.str() + ": " + repr(obj) + " does not fit in " + type);
        }
        PyErr_Clear();
        fail(PyExc_TypeError, label.str() + ": expected a float for " + type + ", got " + type_name(obj));
    }
    return value;
}

// Rounds a double to the nearest value of a binary format with `exponent_bits` and
// `mantissa_bits` (fp16: 5, 10; bf16: 8, 7), ties to even, straight from the double so
// that nothing is rounded twice. Returns the bit pattern; *overflow is set when a finite
// value rounds past the largest finite value of the format.
uint16_t round_to_narrow_float(double value, int exponent_bits, int mantissa_bits, bool* overflow) {
    const uint16_t sign = std::signbit(value) ? uint16_t(1u << (exponent_bits + mantissa_bits)) : 0;
    const uint16_t infinity = uint16_t(((1u << exponent_bits) - 1) << mantissa_bits);
    *overflow = false;
    if (std::isnan(value)) return sign | infinity | uint16_t(1u << (mantissa_bits - 1));  // quiet NaN
    if (std::isinf(value)) return sign | infinity;
    const double magnitude = std::fabs(value);
    if (magnitude == 0.0) return sign;
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int min_exponent = 1 - bias;  // of the smallest normal number
    int exponent;                       // magnitude = m * 2**exponent with m in [1, 2)
    std::frexp(magnitude, &exponent);
    exponent -= 1;
    const bool subnormal = exponent < min_exponent;
    // In units of the format's last place at this magnitude, the value has at most
    // mantissa_bits + 1 integer bits; scaling by a power of two is exact.
    const double units = std::ldexp(magnitude, -((subnormal ? min_exponent : exponent) - mantissa_bits));
    double whole = std::floor(units);
    const double fraction = units - whole;
    if (fraction > 0.5 || (fraction == 0.5 && std::fmod(whole, 2.0) != 0.0)) whole += 1.0;
    const uint32_t significand = uint32_t(whole);
    // A significand that rounded up to the next power of two carries into the exponent
    // field by itself (also from the largest subnormal to the smallest normal).
    const uint32_t bits = subnormal ? significand
                                    : (uint32_t(exponent + bias) << mantissa_bits) + significand -
                                          (1u << mantissa_bits);
    if (bits >= infinity) {
        *overflow = true;
        return sign | infinity;
    }
    return sign | uint16_t(bits);
}

template <typename T>
size_t store(void* out, T value) {
    std::memcpy(out, &value, sizeof(T));
    return sizeof(T);
}

// Writes the parameter bytes of `obj` as type `code` to `out` (8 bytes, 8-aligned);
// returns how many bytes it wrote.
size_t convert(char code, PyObject* obj, const Label& label, void* out) {
    switch (code) {
        case 'P': return store<uint64_t>(out, to_pointer(obj, label));
        case 'b': return store<int8_t>(out, int8_t(to_int(obj, label, "int8", INT8_MIN, INT8_MAX)));
        case 'B': return store<uint8_t>(out, uint8_t(to_int(obj, label, "uint8", 0, UINT8_MAX)));
        case 'h': return store<int16_t>(out, int16_t(to_int(obj, label, "int16", INT16_MIN, INT16_MAX)));
        case 'H': return store<uint16_t>(out, uint16_t(to_int(obj, label, "uint16", 0, UINT16_MAX)));
        case 'i': return store<int32_t>(out, int32_t(to_int(obj, label, "int32", INT32_MIN, INT32_MAX)));
        case 'I': return store<uint32_t>(out, uint32_t(to_int(obj, label, "uint32", 0, UINT32_MAX)));
        case 'l': return store<int64_t>(out, int64_t(to_int(obj, label, "int64", INT64_MIN, INT64_MAX)));
        case 'L': return store<uint64_t>(out, to_uint64(obj, label));
        case 'd': return store<double>(out, to_double(obj, label, "fp64"));
        case 'f': {
            const double value = to_double(obj, label, "fp32");
            const float narrow = float(value);  // IEEE conversion: rounds to nearest even
            if (std::isinf(narrow) && !std::isinf(value))
                fail(PyExc_OverflowError, label.str() + ": " + repr(obj) + " does not fit in fp32");
            return store<float>(out, narrow);
        }
        case 'e': case 'E': {
            const bool half = code == 'e';
            const double value = to_double(obj, label, half ? "fp16" : "bf16");
            bool overflow;
            const uint16_t bits = half ? round_to_narrow_float(value, 5, 10, &overflow)
                                       : round_to_narrow_float(value, 8, 7, &overflow);
            if (overflow)
                fail(PyExc_OverflowError, label.str() + ": " + repr(obj) + " does not fit in " +
                                               (half ? "fp16" : "bf16"));
            return store<uint16_t>(out, bits);
        }
        default:
            fail(PyExc_ValueError, std::string("unknown type code '") + code + "' for " + label.str());
    }
}

constexpr size_t kMapBytes128 = 128;  // a CUtensorMap
alignas(64) const unsigned char kNoMap[kMapBytes128] = {};

// The 128 bytes of a tensor map argument (code 'M'). A bytes object returned by
// map_bytes() is appended to `keep`, which holds it until the launch has copied it.
const char* tensor_map(PyObject* obj, const Label& label, std::vector<py::object>& keep) {
    if (obj == Py_None) return reinterpret_cast<const char*>(kNoMap);
    PyObject* data = obj;
    if (!PyBytes_Check(obj)) {
        py::object method = py::reinterpret_steal<py::object>(optional_attr(obj, kMapBytes));
        if (!method)
            fail(PyExc_TypeError, label.str() + ": expected a TMA tensor map (a tensor descriptor's, or 128 bytes), "
                                                "got " + type_name(obj));
        keep.push_back(method());
        data = keep.back().ptr();
    }
    if (!PyBytes_Check(data) || PyBytes_GET_SIZE(data) != Py_ssize_t(kMapBytes128))
        fail(PyExc_ValueError, label.str() + ": a TMA tensor map is 128 bytes, got " + type_name(data));
    return PyBytes_AS_STRING(data);
}

// Appends the parameter bytes of args[i] per code[i] to `buffer`, each at its size's
// alignment (a tensor map at 64 bytes): what pack() and Launcher.pack() return.
void append_param(std::string& buffer, char code, PyObject* obj, const Label& label) {
    if (code == 'M') {
        std::vector<py::object> keep;
        const char* map = tensor_map(obj, label, keep);
        buffer.resize((buffer.size() + 63) / 64 * 64, '\0');
        buffer.append(map, kMapBytes128);
        return;
    }
    alignas(8) unsigned char slot[8];
    const size_t size = convert(code, obj, label, slot);
    buffer.resize((buffer.size() + size - 1) / size * size, '\0');  // align to the argument's size
    buffer.append(reinterpret_cast<const char*>(slot), size);
}

// The codes as a C string (no copy for ASCII str) after checking them against the args.
const char* checked_codes(py::handle codes, Py_ssize_t n_args) {
    Py_ssize_t n_codes = 0;
    const char* text = PyUnicode_Check(codes.ptr()) ? PyUnicode_AsUTF8AndSize(codes.ptr(), &n_codes) : nullptr;
    if (text == nullptr) {
        PyErr_Clear();
        fail(PyExc_TypeError, "codes must be a str of type codes");
    }
    if (n_codes != n_args)
        fail(PyExc_ValueError, "got " + std::to_string(n_args) + " arguments for " + std::to_string(n_codes) +
                                    " type codes '" + text + "'");
    return text;
}

// ----------------------------------------------------------------------------------
// The module's functions.

bool available() { return driver().loaded; }

py::bytes pack(py::handle codes, py::handle args, py::handle names) {
    py::object items = py::reinterpret_steal<py::object>(PySequence_Fast(args.ptr(), "args must be a sequence"));
    if (!items) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
    const char* code = checked_codes(codes, n);
    PyObject* name_tuple = names.is_none() ? nullptr : names.ptr();
    std::string buffer;
    for (Py_ssize_t i = 0; i < n; ++i)
        append_param(buffer, code[i], PySequence_Fast_GET_ITEM(items.ptr(), i), Label{size_t(i), name_tuple});
    return py::bytes(buffer);
}

// The grid, block and shared memory as cuLaunchKernel takes them, or a ValueError.
void check_launch_shape(long long grid_x, long long grid_y, long long grid_z, long long block_x,
                        long long shared_bytes) {
    if (grid_x <= 0 || grid_y <= 0 || grid_z <= 0 || grid_x > UINT32_MAX || grid_y > UINT32_MAX ||
        grid_z > UINT32_MAX)
        fail(PyExc_ValueError, "launch: grid dimensions must be positive 32-bit integers, got (" +
                                    std::to_string(grid_x) + ", " + std::to_string(grid_y) + ", " +
                                    std::to_string(grid_z) + ")");
    if (block_x <= 0 || block_x > UINT32_MAX)
        fail(PyExc_ValueError, "launch: block size must be positive, got " + std::to_string(block_x));
    if (shared_bytes < 0 || shared_bytes > UINT32_MAX)
        fail(PyExc_ValueError, "launch: invalid dynamic shared memory size " + std::to_string(shared_bytes));
}

// One 8-byte slot per parameter; cuLaunchKernel reads each parameter's size from the
// kernel image. Up to kInline parameters live on the stack.
struct ParamSlots {
    static constexpr Py_ssize_t kInline = 32;
    uint64_t inline_slots[kInline];
    void* inline_params[kInline];
    std::vector<uint64_t> heap_slots;
    std::vector<void*> heap_params;
    uint64_t* slots = inline_slots;
    void** params = inline_params;
    std::vector<py::object> keep;  // map_bytes() results, alive until the launch has copied them

    explicit ParamSlots(Py_ssize_t n) {
        if (n > kInline) {
            heap_slots.resize(n);
            heap_params.resize(n);
            slots = heap_slots.data();
            params = heap_params.data();
        }
        for (Py_ssize_t i = 0; i < n; ++i) params[i] = &slots[i];
    }

    // Parameter i of type `code` from `obj`: 8 bytes in its slot, or a tensor map's 128
    // bytes where they are (cuLaunchKernel reads each parameter's size from the kernel).
    void set(Py_ssize_t i, char code, PyObject* obj, const Label& label) {
        if (code == 'M')
            params[i] = const_cast<char*>(tensor_map(obj, label, keep));
        else
            convert(code, obj, label, &slots[i]);
    }
};

// cuLaunchKernel with the GIL released, `context` made current for the launch only;
// with `flags`, cuLaunchKernelEx with the matching launch attributes.
void launch_converted(uint64_t function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                      unsigned shared_bytes, uint64_t stream, void** params, uint64_t context, unsigned flags = 0) {
    const Driver& d = driver();
    if (!d.loaded) fail(PyExc_RuntimeError, "cannot launch: " + d.error);
    if (flags != 0 && d.cuLaunchKernelEx == nullptr)
        fail(PyExc_RuntimeError, "cannot launch with launch_pdl or launch_cooperative_grid: the CUDA driver has no "
                                 "cuLaunchKernelEx (CUDA 12 or newer is needed)");
    LaunchAttribute attributes[2] = {};
    unsigned n_attributes = 0;
    if (flags & kLaunchCooperative) {
        attributes[n_attributes].id = kAttributeCooperative;
        attributes[n_attributes++].value.value = 1;
    }
    if (flags & kLaunchDependent) {
        attributes[n_attributes].id = kAttributeProgrammaticSerialization;
        attributes[n_attributes++].value.value = 1;
    }
    LaunchConfig config{grid_x, grid_y, grid_z, block_x, 1, 1, shared_bytes, reinterpret_cast<CUstream>(stream),
                        attributes, n_attributes};
    CUresult status = CUDA_SUCCESS;
    const char* failed_call = "cuLaunchKernel";
    {
        // cuLaunchKernel blocks when the launch queue is full; other Python threads run meanwhile.
        py::gil_scoped_release no_gil;
        // The kernel's module lives in `context`; when another one (or none) is current on
        // this thread, push it for the launch only, leaving the caller's state as it was.
        CUcontext wanted = reinterpret_cast<CUcontext>(context);
        CUcontext current = nullptr;
        bool pushed = false;
        if (wanted != nullptr && d.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != wanted) {
            status = d.cuCtxPushCurrent(wanted);
            failed_call = "cuCtxPushCurrent";
            pushed = status == CUDA_SUCCESS;
        }
        if (status == CUDA_SUCCESS && flags != 0) {
            failed_call = "cuLaunchKernelEx";
            status = d.cuLaunchKernelEx(&config, reinterpret_cast<CUfunction>(function), params, nullptr);
        } else if (status == CUDA_SUCCESS) {
            failed_call = "cuLaunchKernel";
            status = d.cuLaunchKernel(reinterpret_cast<CUfunction>(function), grid_x, grid_y, grid_z, block_x, 1, 1,
                                      shared_bytes, reinterpret_cast<CUstream>(stream), params, nullptr);
        }
        if (pushed) {
            CUcontext popped;
            d.cuCtxPopCurrent(&popped);
        }
    }
    if (status != CUDA_SUCCESS) raise_cuda(d, failed_call, status);
}

void launch(uint64_t function, long long grid_x, long long grid_y, long long grid_z, long long block_x,
            long long shared_bytes, uint64_t stream, py::handle codes, py::handle args, py::handle names,
            uint64_t context) {
    if (function == 0) fail(PyExc_ValueError, "launch: the function handle is null");
    check_launch_shape(grid_x, grid_y, grid_z, block_x, shared_bytes);

    // Borrowed items of a list or tuple, without copying.
    py::object items = py::reinterpret_steal<py::object>(PySequence_Fast(args.ptr(), "args must be a sequence"));
    if (!items) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
    const char* code = checked_codes(codes, n);
    PyObject* name_tuple = names.is_none() ? nullptr : names.ptr();

    ParamSlots slots(n);
    for (Py_ssize_t i = 0; i < n; ++i)
        slots.set(i, code[i], PySequence_Fast_GET_ITEM(items.ptr(), i), Label{size_t(i), name_tuple});
    launch_converted(function, unsigned(grid_x), unsigned(grid_y), unsigned(grid_z), unsigned(block_x),
                     unsigned(shared_bytes), stream, slots.params, context);
}

// ----------------------------------------------------------------------------------
// Launcher: one loaded kernel, ready to launch.
//
//   Launcher(function, block_x, shared_bytes, codes, names, context, param_indices)
//   launcher(grid_x, grid_y, grid_z, stream, args[, flags])  -> None
//   launcher.pack(args)                             -> the parameter bytes, as pack()
//
// `args` are all of the @jit function's arguments (a tuple or list); the kernel's
// parameters are args[param_indices[i]], converted per codes[i] and named names[i] in
// errors. A grid with a zero dimension launches nothing; `stream` is an int (0: the
// default stream). `flags`: 1 for a cooperative launch, 2 for a programmatic dependent
// launch (launch_pdl), or both.

struct LauncherObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    uint64_t function;
    uint64_t context;
    unsigned block_x;
    unsigned shared_bytes;
    PyObject* codes;         // str, one code per parameter
    PyObject* names;         // tuple of str, one per parameter
    const char* code;        // the codes' UTF-8 (owned by `codes`)
    Py_ssize_t n_params;
    Py_ssize_t* indices;     // n_params positions into args
    Py_ssize_t n_args_needed;  // 1 + the largest index
};

// `args` as a fast sequence holding every argument the kernel reads.
py::object argument_items(LauncherObject* self, PyObject* args) {
    py::object items = py::reinterpret_steal<py::object>(PySequence_Fast(args, "args must be a tuple or list"));
    if (!items) throw py::error_already_set();
    const Py_ssize_t n_args = PySequence_Fast_GET_SIZE(items.ptr());
    if (n_args < self->n_args_needed)
        fail(PyExc_ValueError, "got " + std::to_string(n_args) + " arguments; the kernel reads argument " +
                                    std::to_string(self->n_args_needed - 1));
    return items;
}

long long grid_dimension(PyObject* value) {
    long long result = PyLong_AsLongLong(value);
    if (result == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(PyExc_TypeError, "launch: grid dimensions must be ints, got " + type_name(value));
    }
    return result;
}

PyObject* launcher_call(PyObject* object, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* self = reinterpret_cast<LauncherObject*>(object);
    try {
        const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
        if ((nargs != 5 && nargs != 6) || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0))
            fail(PyExc_TypeError, "Launcher takes (grid_x, grid_y, grid_z, stream, args[, flags]), positionally");
        unsigned flags = 0;
        if (nargs == 6) {
            const long long value = PyLong_AsLongLong(args[5]);
            if ((value == -1 && PyErr_Occurred()) || value < 0 || value > 3) {
                PyErr_Clear();
                fail(PyExc_TypeError, "Launcher: flags must be an int from 0 to 3");
            }
            flags = unsigned(value);
        }
        const long long grid_x = grid_dimension(args[0]);
        const long long grid_y = grid_dimension(args[1]);
        const long long grid_z = grid_dimension(args[2]);
        if (grid_x == 0 || grid_y == 0 || grid_z == 0) Py_RETURN_NONE;  // nothing to run
        check_launch_shape(grid_x, grid_y, grid_z, self->block_x, self->shared_bytes);
        uint64_t stream = 0;
        if (args[3] != Py_None) stream = to_address(args[3], Label{0, nullptr}, "the stream");
        py::object items = argument_items(self, args[4]);
        PyObject** item = PySequence_Fast_ITEMS(items.ptr());
        ParamSlots slots(self->n_params);
        for (Py_ssize_t i = 0; i < self->n_params; ++i)
            slots.set(i, self->code[i], item[self->indices[i]], Label{size_t(i), self->names});
        launch_converted(self->function, unsigned(grid_x), unsigned(grid_y), unsigned(grid_z), self->block_x,
                         self->shared_bytes, stream, slots.params, self->context, flags);
        Py_RETURN_NONE;
    } catch (py::error_already_set& error) {
        error.restore();
        return nullptr;
    } catch (const std::exception& error) {
        PyErr_SetString(PyExc_RuntimeError, error.what());
        return nullptr;
    }
}

PyObject* launcher_pack(PyObject* object, PyObject* const* args, Py_ssize_t nargs) {
    auto* self = reinterpret_cast<LauncherObject*>(object);
    try {
        if (nargs != 1) fail(PyExc_TypeError, "Launcher.pack takes the arguments as one tuple or list");
        py::object items = argument_items(self, args[0]);
        PyObject** item = PySequence_Fast_ITEMS(items.ptr());
        // The same layout as pack(): each parameter at its size's alignment.
        std::string buffer;
        for (Py_ssize_t i = 0; i < self->n_params; ++i)
            append_param(buffer, self->code[i], item[self->indices[i]], Label{size_t(i), self->names});
        return PyBytes_FromStringAndSize(buffer.data(), Py_ssize_t(buffer.size()));
    } catch (py::error_already_set& error) {
        error.restore();
        return nullptr;
    } catch (const std::exception& error) {
        PyErr_SetString(PyExc_RuntimeError, error.what());
        return nullptr;
    }
}

PyObject* launcher_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* keywords[] = {"function", "block_x", "shared_bytes", "codes", "names", "context",
                                     "param_indices", nullptr};
    unsigned long long function = 0, context = 0;
    long long block_x = 0, shared_bytes = 0;
    PyObject *codes = nullptr, *names = nullptr, *indices = nullptr;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KLLUOKO:Launcher", const_cast<char**>(keywords), &function,
                                     &block_x, &shared_bytes, &codes, &names, &context, &indices))
        return nullptr;
    try {
        if (function == 0) fail(PyExc_ValueError, "Launcher: the function handle is null");
        check_launch_shape(1, 1, 1, block_x, shared_bytes);
        py::object index_list = py::reinterpret_steal<py::object>(
            PySequence_Fast(indices, "Launcher: param_indices must be a sequence of ints"));
        if (!index_list) throw py::error_already_set();
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(index_list.ptr());
        const char* code = checked_codes(codes, n);
        if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != n)
            fail(PyExc_ValueError, "Launcher: names must be a tuple of one str per parameter");
        for (Py_ssize_t i = 0; i < n; ++i) {
            if (!PyUnicode_Check(PyTuple_GET_ITEM(names, i))) fail(PyExc_TypeError, "Launcher: names must be str");
            if (std::strchr("PbBhHiIlLeEfdM", code[i]) == nullptr || code[i] == '\0')
                fail(PyExc_ValueError, std::string("Launcher: unknown type code '") + code[i] + "'");
        }
        std::vector<Py_ssize_t> positions(n);
        Py_ssize_t needed = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            positions[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(index_list.ptr(), i));
            if (positions[i] == -1 && PyErr_Occurred()) throw py::error_already_set();
            if (positions[i] < 0) fail(PyExc_ValueError, "Launcher: param_indices must not be negative");
            needed = std::max(needed, positions[i] + 1);
        }
        auto* self = reinterpret_cast<LauncherObject*>(type->tp_alloc(type, 0));
        if (self == nullptr) return nullptr;
        self->vectorcall = launcher_call;
        self->function = function;
        self->context = context;
        self->block_x = unsigned(block_x);
        self->shared_bytes = unsigned(shared_bytes);
        Py_INCREF(codes);
        self->codes = codes;
        Py_INCREF(names);
        self->names = names;
        self->code = code;
        self->n_params = n;
        self->n_args_needed = needed;
        self->indices = static_cast<Py_ssize_t*>(PyMem_Malloc(sizeof(Py_ssize_t) * size_t(std::max<Py_ssize_t>(n, 1))));
        if (self->indices == nullptr) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        std::copy(positions.begin(), positions.end(), self->indices);
        return reinterpret_cast<PyObject*>(self);
    } catch (py::error_already_set& error) {
        error.restore();
        return nullptr;
    }
}

void launcher_dealloc(PyObject* object) {
    auto* self = reinterpret_cast<LauncherObject*>(object);
    Py_XDECREF(self->codes);
    Py_XDECREF(self->names);
    PyMem_Free(self->indices);
    PyTypeObject* type = Py_TYPE(object);
    type->tp_free(object);
    Py_DECREF(type);
}

PyObject* launcher_repr(PyObject* object) {
    auto* self = reinterpret_cast<LauncherObject*>(object);
    return PyUnicode_FromFormat("<tilec._launcher.Launcher codes='%U' block_x=%u shared_bytes=%u>", self->codes,
                                self->block_x, self->shared_bytes);
}

PyMethodDef launcher_methods[] = {
    {"pack", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(launcher_pack)), METH_FASTCALL,
     "The parameter bytes of the kernel's arguments among `args`, as pack() lays them out."},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef launcher_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(LauncherObject, vectorcall), READONLY, nullptr},
    {"function", T_ULONGLONG, offsetof(LauncherObject, function), READONLY, "the CUfunction"},
    {"context", T_ULONGLONG, offsetof(LauncherObject, context), READONLY, "the CUcontext made current to launch"},
    {"block_x", T_UINT, offsetof(LauncherObject, block_x), READONLY, "threads per block"},
    {"shared_bytes", T_UINT, offsetof(LauncherObject, shared_bytes), READONLY, "dynamic shared memory"},
    {"codes", T_OBJECT, offsetof(LauncherObject, codes), READONLY, "one type code per parameter"},
    {"names", T_OBJECT, offsetof(LauncherObject, names), READONLY, "the parameters' names"},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot launcher_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(launcher_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(launcher_dealloc)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_repr, reinterpret_cast<void*>(launcher_repr)},
    {Py_tp_methods, launcher_methods},
    {Py_tp_members, launcher_members},
    {Py_tp_doc, const_cast<char*>(
        "Launcher(function, block_x, shared_bytes, codes, names, context, param_indices): one loaded kernel; "
        "launcher(grid_x, grid_y, grid_z, stream, args) launches it with the parameters selected from args.")},
    {0, nullptr},
};

PyType_Spec launcher_spec = {
    "tilec._launcher.Launcher", sizeof(LauncherObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, launcher_slots,
};

// ----------------------------------------------------------------------------------
// GridCall: what `kernel[grid]` returns.
//
//   GridCall(function, grid, on_bad_call)(*args, **kwargs)
//       -> function(grid, *args, **kwargs)
//
// functools.partial, plus one thing: when Python cannot bind the arguments to
// `function`'s parameters (a TypeError raised before its body runs, so with no
// traceback), it returns on_bad_call(args, kwargs, error), which raises the error to
// report (a LaunchError naming the argument). The generated launcher thus keeps
// CPython's argument binding, in C, without a Python frame around every launch.

struct GridCallObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject* function;
    PyObject* grid;
    PyObject* on_bad_call;
};

// on_bad_call(args, kwargs, error) for a failed binding; returns what it returns (NULL
// with its exception set, normally).
PyObject* report_bad_call(GridCallObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                          PyObject* error) {
    PyObject* positional = PyTuple_New(nargs);
    PyObject* keywords = PyDict_New();
    if (positional == nullptr || keywords == nullptr) {
        Py_XDECREF(positional);
        Py_XDECREF(keywords);
        return nullptr;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(positional, i, args[i]);
    }
    const Py_ssize_t n_keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < n_keywords; ++i) {
        if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
            Py_DECREF(positional);
            Py_DECREF(keywords);
            return nullptr;
        }
    }
    PyObject* result = PyObject_CallFunctionObjArgs(self->on_bad_call, positional, keywords, error, nullptr);
    Py_DECREF(positional);
    Py_DECREF(keywords);
    return result;
}

PyObject* grid_call(PyObject* object, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* self = reinterpret_cast<GridCallObject*>(object);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t total = nargs + (kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject* result;
    if (nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET) {
        // The caller lets us use args[-1]: put the grid there, as functools.partial does.
        PyObject** with_grid = const_cast<PyObject**>(args) - 1;
        PyObject* saved = with_grid[0];
        with_grid[0] = self->grid;
        result = PyObject_Vectorcall(self->function, with_grid, size_t(nargs + 1), kwnames);
        with_grid[0] = saved;
    } else {
        constexpr Py_ssize_t kInline = 24;
        PyObject* inline_args[kInline];
        std::vector<PyObject*> heap_args;
        PyObject** with_grid = inline_args;
        if (total + 1 > kInline) {
            heap_args.resize(size_t(total + 1));
            with_grid = heap_args.data();
        }
        with_grid[0] = self->grid;
        std::copy(args, args + total, with_grid + 1);
        result = PyObject_Vectorcall(self->function, with_grid, size_t(nargs + 1), kwnames);
    }
    if (result != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return result;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject* error = PyErr_GetRaisedException();
    PyObject* traceback = PyException_GetTraceback(error);
    if (traceback != nullptr) {  // raised inside the function: not a binding error
        Py_DECREF(traceback);
        PyErr_SetRaisedException(error);
        return nullptr;
    }
    result = report_bad_call(self, args, nargs, kwnames, error);
    if (result != nullptr) {  // on_bad_call reported nothing: the original error stands
        Py_DECREF(result);
        PyErr_SetRaisedException(error);
        return nullptr;
    }
    Py_DECREF(error);
    return nullptr;
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (traceback != nullptr) {  // raised inside the function: not a binding error
        PyErr_Restore(type, value, traceback);
        return nullptr;
    }
    PyErr_NormalizeException(&type, &value, &traceback);
    result = report_bad_call(self, args, nargs, kwnames, value);
    if (result != nullptr) {  // on_bad_call reported nothing: the original error stands
        Py_DECREF(result);
        PyErr_Restore(type, value, traceback);
        return nullptr;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return nullptr;
#endif
}

PyObject* grid_call_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* keywords[] = {"function", "grid", "on_bad_call", nullptr};
    PyObject *function = nullptr, *grid = nullptr, *on_bad_call = nullptr;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:GridCall", const_cast<char**>(keywords), &function, &grid,
                                     &on_bad_call))
        return nullptr;
    if (!PyCallable_Check(function) || !PyCallable_Check(on_bad_call)) {
        PyErr_SetString(PyExc_TypeError, "GridCall: function and on_bad_call must be callable");
        return nullptr;
    }
    auto* self = reinterpret_cast<GridCallObject*>(type->tp_alloc(type, 0));
    if (self == nullptr) return nullptr;
    self->vectorcall = grid_call;
    Py_INCREF(function);
    self->function = function;
    Py_INCREF(grid);
    self->grid = grid;
    Py_INCREF(on_bad_call);
    self->on_bad_call = on_bad_call;
    return reinterpret_cast<PyObject*>(self);
}

int grid_call_traverse(PyObject* object, visitproc visit, void* arg) {
    auto* self = reinterpret_cast<GridCallObject*>(object);
    Py_VISIT(self->function);
    Py_VISIT(self->grid);
    Py_VISIT(self->on_bad_call);
    Py_VISIT(Py_TYPE(object));
    return 0;
}

int grid_call_clear(PyObject* object) {
    auto* self = reinterpret_cast<GridCallObject*>(object);
    Py_CLEAR(self->function);
    Py_CLEAR(self->grid);
    Py_CLEAR(self->on_bad_call);
    return 0;
}

void grid_call_dealloc(PyObject* object) {
    PyObject_GC_UnTrack(object);
    grid_call_clear(object);
    PyTypeObject* type = Py_TYPE(object);
    type->tp_free(object);
    Py_DECREF(type);
}

PyMemberDef grid_call_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(GridCallObject, vectorcall), READONLY, nullptr},
    {"function", T_OBJECT, offsetof(GridCallObject, function), READONLY, "the function called"},
    {"grid", T_OBJECT, offsetof(GridCallObject, grid), READONLY, "its first argument"},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot grid_call_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(grid_call_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(grid_call_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(grid_call_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(grid_call_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, grid_call_members},
    {Py_tp_doc, const_cast<char*>(
        "GridCall(function, grid, on_bad_call)(*args, **kwargs) calls function(grid, *args, **kwargs); when the "
        "arguments cannot be bound to function's parameters, on_bad_call(args, kwargs, error) raises instead.")},
    {0, nullptr},
};

PyType_Spec grid_call_spec = {
    "tilec._launcher.GridCall", sizeof(GridCallObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC, grid_call_slots,
};

}  // namespace

PYBIND11_MODULE(_launcher, m) {
    m.doc() = "tilec's kernel launcher: argument packing and cuLaunchKernel (libcuda opened lazily).";
    kDataPtr = PyUnicode_InternFromString("data_ptr");
    kIsCuda = PyUnicode_InternFromString("is_cuda");
    kIsPinned = PyUnicode_InternFromString("is_pinned");
    kMapBytes = PyUnicode_InternFromString("map_bytes");
    kCudaArrayInterface = PyUnicode_InternFromString("__cuda_array_interface__");
    kArrayInterface = PyUnicode_InternFromString("__array_interface__");

    m.def("available", &available, "True when libcuda loads and cuInit(0) succeeds.");
    m.def("pack", &pack, py::arg("codes"), py::arg("args"), py::arg("names") = py::none(),
          "The kernel parameter bytes of `args` per type `codes`, each argument aligned to its size.");
    m.def("launch", &launch, py::arg("function"), py::arg("grid_x"), py::arg("grid_y"), py::arg("grid_z"),
          py::arg("block_x"), py::arg("shared_bytes"), py::arg("stream"), py::arg("codes"), py::arg("args"),
          py::arg("names") = py::none(), py::arg("context") = 0,
          "cuLaunchKernel(function, grid, (block_x, 1, 1), shared_bytes, stream) with `args` packed per "
          "`codes`; `context`, when not 0, is made current for the launch if it is not already.");
    PyObject* launcher_type = PyType_FromSpec(&launcher_spec);
    if (launcher_type == nullptr) throw py::error_already_set();
    m.add_object("Launcher", py::reinterpret_steal<py::object>(launcher_type));
    PyObject* grid_call_type = PyType_FromSpec(&grid_call_spec);
    if (grid_call_type == nullptr) throw py::error_already_set();
    m.add_object("GridCall", py::reinterpret_steal<py::object>(grid_call_type));
}
