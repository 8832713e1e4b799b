// Writes a table as CSV byte for byte as Arrow's CSV writer does (analysis/csv_out.py is the caller
// and keeps Arrow for any table with a column kind not here): a header of quoted names; floats in
// their shortest round-trip form, in decimal from 1e-6 up to below 1e10 and in exponent form
// ("1e-7", "1.5e+10") outside; integers in decimal; true/false; text quoted with doubled quotes; an
// empty field for a missing value. Rows are formatted on every CPU, where Arrow writes a table on
// one: 15.3 M counter rows took 1.9 CPU-s here (Arrow: 4.7 CPU-s, measured side by side with an
// earlier version of this writer that took 3.7).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// Column kinds (analysis/csv_out.py: _NATIVE_KINDS).
// Text is given as codes into a table of quoted texts, codes of 8, 16 or 32 bits as pandas keeps
// them.
enum Kind : int { K_F64 = 0, K_I64, K_I32, K_I16, K_I8, K_BOOL, K_TEXT8, K_TEXT16, K_TEXT32 };

// A row's text goes straight into a buffer with room for the longest row the columns can give
// (WIDEST_NUMBER per number, each text column's longest text): one bound check per row instead of
// a std::string append, with its own check, per character or cell. Formatting took a quarter less
// CPU time so.
constexpr size_t WIDEST_NUMBER = 32; // "-0.0000012345678901234567", "-1.2345678901234567e-308"

struct Text {
    std::unique_ptr<char[]> data;
    size_t size = 0, capacity = 0;
    // Room for `more` bytes after the used ones (nothing zeroed: every byte is written before use).
    char *room(size_t more) {
        if (capacity - size < more) {
            size_t grown = std::max(2 * capacity, size + more);
            std::unique_ptr<char[]> bigger(new char[grown]);
            if (size)
                std::memcpy(bigger.get(), data.get(), size);
            data = std::move(bigger);
            capacity = grown;
        }
        return data.get() + size;
    }
};

// A double of the decimal range that is the nearest double to a decimal of at most 15 significant
// digits (and 12, 9, 6 or 5 places, by its size), written as that decimal without its trailing
// zeros; nullptr (nothing written) for any other. Most measured values are such decimals (likwid's
// four-place metrics, the probe's nine significant digits, clock rates): a multiplication and a
// division here instead of the shortest-digits search of std::to_chars. It is the shortest
// round-trip form: at most one decimal of up to 15 significant digits has a given nearest double
// (DBL_DIG), so no shorter one rounds to it.
char *put_few_decimals(double v, double size, char *out) {
    static constexpr double power[] = {1e0, 1e1, 1e2, 1e3,  1e4,  1e5, 1e6,
                                       1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
    // places kept below 1e15 in total: 12 below 1000, 9 below 1e6, 6 below 1e9, 5 up to 1e10
    int places = size < 1e3 ? 12 : size < 1e6 ? 9 : size < 1e9 ? 6 : 5;
    double scaled = std::nearbyint(v * power[places]);
    // The division is correctly rounded, as parsing the decimal is: equal means the decimal
    // scaled / 10^places has v as its nearest double (both operands exact: below 2^53, 10^12).
    if (scaled / power[places] != v)
        return nullptr;
    int64_t digits = int64_t(std::fabs(scaled));
    if (v < 0)
        *out++ = '-';
    int64_t unit = int64_t(power[places]);
    int64_t whole = digits / unit, fraction = digits % unit;
    out = std::to_chars(out, out + WIDEST_NUMBER, whole).ptr;
    if (fraction == 0)
        return out;
    while (fraction % 10 == 0) { // trailing zeros off
        fraction /= 10;
        places--;
    }
    *out++ = '.';
    char *end = out + places;
    for (char *p = end; p > out; fraction /= 10)
        *--p = char('0' + fraction % 10);
    return end;
}

// A finite or infinite double as Arrow writes it (double-conversion's shortest form with its
// decimal range).
char *put_double(double v, char *out) {
    if (std::isinf(v)) {
        if (v < 0)
            *out++ = '-';
        std::memcpy(out, "inf", 3);
        return out + 3;
    }
    // Within the decimal range the shortest fixed form has the same digits (a double has one
    // shortest round-trip decimal; the range's ends 1e-6 and 1e10 are compared as doubles, as the
    // shortest form of a double below them is below them): one conversion instead of the exponent
    // form taken apart below.
    double size = std::fabs(v);
    if (size >= 1e-6 && size < 1e10) {
        if (char *end = put_few_decimals(v, size, out))
            return end;
        return std::to_chars(out, out + WIDEST_NUMBER, v, std::chars_format::fixed).ptr;
    }
    char buf[40];
    auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    // buf: [-]d[.ddd]e(+|-)xx
    const char *p = buf;
    if (*p == '-') {
        *out++ = '-';
        p++;
    }
    const char *e = static_cast<const char *>(std::memchr(p, 'e', size_t(end - p)));
    char digits[24];
    int n = 0;
    for (const char *q = p; q < e; q++)
        if (*q != '.')
            digits[n++] = *q;
    int exponent = 0;
    std::from_chars(e + 1 + (e[1] == '+'), end, exponent);
    auto put = [&out](const char *from, int count) {
        std::memcpy(out, from, size_t(count));
        out += count;
    };
    if (exponent >= -6 && exponent < 10) { // (zero, and rounding at the range's ends)
        if (exponent >= 0) {
            int whole = exponent + 1;
            if (n <= whole) {
                put(digits, n);
                out = std::fill_n(out, whole - n, '0');
            } else {
                put(digits, whole);
                *out++ = '.';
                put(digits + whole, n - whole);
            }
        } else {
            put("0.", 2);
            out = std::fill_n(out, -exponent - 1, '0');
            put(digits, n);
        }
        return out;
    }
    *out++ = digits[0];
    if (n > 1) {
        *out++ = '.';
        put(digits + 1, n - 1);
    }
    *out++ = 'e';
    *out++ = exponent < 0 ? '-' : '+';
    return std::to_chars(out, out + 8, exponent < 0 ? -exponent : exponent).ptr;
}

template <class T> char *put_int(T v, char *out) {
    return std::to_chars(out, out + WIDEST_NUMBER, v).ptr;
}

// The file is written with O_DIRECT where the file system takes it: the rows go from an aligned
// buffer of this writer to the disk, not through the page cache. Copying a gigabyte of CSV into the
// page cache cost the kernel 1.1-1.4 CPU-s in an analysis whose two CPUs are both busy, and the
// caller's fsync (sbcore/atomic.py) then waited for all of it. The buffer is written a whole
// STAGED at a time (a multiple of any block size O_DIRECT asks for); the last, partial block
// goes through the page cache (O_DIRECT taken off the descriptor). Where the file system refuses
// O_DIRECT (tmpfs before Linux 6.6, some network file systems), everything goes through the page
// cache, its writeback started every STARTED_EVERY bytes so that the fsync waits for the last of
// them only.
constexpr size_t STAGED = size_t(8) << 20;
constexpr size_t STARTED_EVERY = size_t(32) << 20;

struct Output {
    int fd = -1;
    bool direct = false;
    off_t written = 0, started = 0;
    char *staged = nullptr; // STAGED bytes, page-aligned (O_DIRECT)
    size_t used = 0;
    Output(const char *path, bool try_direct) {
        int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
#ifdef O_DIRECT
        fd = try_direct ? open(path, flags | O_DIRECT, 0644) : -1;
        direct = fd >= 0 && posix_memalign(reinterpret_cast<void **>(&staged), 4096, STAGED) == 0;
        if (fd >= 0 && !direct)
            close(fd);
        if (!direct)
            fd = -1;
#endif
        if (fd < 0)
            fd = open(path, flags, 0644);
    }
    ~Output() {
        std::free(staged);
        if (fd >= 0)
            close(fd);
    }
    Output(const Output &) = delete;
    Output &operator=(const Output &) = delete;
};

bool write_all(Output &to, const char *data, size_t size) {
    for (size_t done = 0; done < size;) {
        ssize_t n = write(to.fd, data + done, size - done);
        if (n < 0 && errno == EINVAL && to.direct) { // O_DIRECT refused after all: page cache
            to.direct = false;
            fcntl(to.fd, F_SETFL, fcntl(to.fd, F_GETFL) & ~O_DIRECT);
            continue;
        }
        if (n <= 0)
            return false;
        done += size_t(n);
    }
    to.written += off_t(size);
    return true;
}

void start_writeback(Output &out) {
#ifdef __linux__
    if (out.written - out.started >= off_t(STARTED_EVERY)) {
        // Only starts the writeback (no wait for it): a failure here is the fsync's to report.
        sync_file_range(out.fd, out.started, out.written - out.started, SYNC_FILE_RANGE_WRITE);
        out.started = out.written;
    }
#else
    (void)out;
#endif
}

bool flush(Output &to, Text &text) {
    const char *data = text.data.get();
    size_t size = text.size;
    text.size = 0;
    if (!to.direct) {
        if (!write_all(to, data, size))
            return false;
        start_writeback(to);
        return true;
    }
    while (size) {
        size_t part = std::min(size, STAGED - to.used);
        std::memcpy(to.staged + to.used, data, part);
        to.used += part;
        data += part;
        size -= part;
        if (to.used == STAGED) {
            to.used = 0;
            if (!write_all(to, to.staged, STAGED))
                return false;
        }
    }
    return true;
}

// The staged bytes left (fewer than a block's multiple), through the page cache.
bool finish(Output &to) {
    if (!to.direct || !to.used)
        return true;
#ifdef O_DIRECT
    if (fcntl(to.fd, F_SETFL, fcntl(to.fd, F_GETFL) & ~O_DIRECT) != 0)
        return false;
#endif
    to.direct = false;
    size_t left = to.used;
    to.used = 0;
    return write_all(to, to.staged, left);
}

// Text number k (-1: missing, an empty field).
char *put_text(int32_t k, const char *texts, const int64_t *offsets, char *out) {
    if (k < 0)
        return out;
    size_t length = size_t(offsets[k + 1] - offsets[k]);
    std::memcpy(out, texts + offsets[k], length);
    return out + length;
}

char *put_cell(int kind, const void *values, const char *texts, const int64_t *offsets, int64_t r,
               char *out) {
    switch (kind) {
    case K_F64: {
        double v = static_cast<const double *>(values)[r];
        return std::isnan(v) ? out : put_double(v, out); // NaN is pandas' missing value: empty
    }
    case K_I64:
        return put_int(static_cast<const int64_t *>(values)[r], out);
    case K_I32:
        return put_int(static_cast<const int32_t *>(values)[r], out);
    case K_I16:
        return put_int(static_cast<const int16_t *>(values)[r], out);
    case K_I8:
        return put_int(static_cast<const int8_t *>(values)[r], out);
    case K_BOOL:
        if (static_cast<const uint8_t *>(values)[r]) {
            std::memcpy(out, "true", 4);
            return out + 4;
        }
        std::memcpy(out, "false", 5);
        return out + 5;
    case K_TEXT8:
        return put_text(static_cast<const int8_t *>(values)[r], texts, offsets, out);
    case K_TEXT16:
        return put_text(static_cast<const int16_t *>(values)[r], texts, offsets, out);
    case K_TEXT32:
        return put_text(static_cast<const int32_t *>(values)[r], texts, offsets, out);
    }
    return out;
}

// The most bytes a cell of this column can take.
size_t widest_cell(int kind, const int64_t *offsets, int64_t n_texts) {
    if (kind < K_TEXT8)
        return WIDEST_NUMBER;
    int64_t widest = 0;
    for (int64_t k = 0; k < n_texts; k++)
        widest = std::max(widest, offsets[k + 1] - offsets[k]);
    return size_t(widest);
}

} // namespace

extern "C" {

// Writes `rows` rows of `columns` columns to a new file at `path`. Column c has kind kinds[c] and
// its values at data[c]: doubles (NaN: empty), integers, bools as bytes, or text as 8-, 16- or
// 32-bit codes (-1: empty) into texts[c], which holds the already quoted texts joined, text k from
// offsets[c][k] to offsets[c][k + 1], k < counts[c]. `header` is the header line, quoted, with its
// newline. `direct`: written past the page cache where the file system allows it (see Output). 0,
// or errno.
int sbw_write_csv(const char *path, const char *header, int64_t rows, int columns, const int *kinds,
                  const void *const *data, const char *const *texts, const int64_t *const *offsets,
                  const int64_t *counts, int threads, int direct) {
    Output output(path, direct != 0);
    if (output.fd < 0)
        return errno;
    // Blocks of rows are formatted by `threads` threads side by side into one set of strings while
    // a writer thread writes the previous set, in order (and waits for the disk with O_DIRECT).
    constexpr int64_t BLOCK = 1 << 15;
    threads = std::max(1, threads);
    std::vector<Text> sets[2] = {std::vector<Text>(size_t(threads)),
                                 std::vector<Text>(size_t(threads))};
    size_t header_length = std::strlen(header);
    std::memcpy(sets[0][0].room(header_length), header, header_length);
    sets[0][0].size = header_length;
    size_t widest_row = 1; // the newline
    for (int c = 0; c < columns; c++)
        widest_row += 1 + widest_cell(kinds[c], offsets[c], counts[c]);
    auto format = [&](int64_t first, int64_t last, Text &text) {
        // A buffer of this thread's own (each Text of a set is a separate allocation: threads
        // writing next to each other would bounce a cache line between them on every row).
        for (int64_t r = first; r < last; r++) {
            char *out = text.room(widest_row);
            for (int c = 0; c < columns; c++) {
                if (c)
                    *out++ = ',';
                out = put_cell(kinds[c], data[c], texts[c], offsets[c], r, out);
            }
            *out++ = '\n';
            text.size = size_t(out - text.data.get());
        }
    };
    int write_error = 0;
    auto write_set = [&](std::vector<Text> &set) {
        for (auto &text : set)
            if (!write_error && !flush(output, text))
                write_error = errno;
    };
    std::thread writer;
    int64_t batch = 0;
    for (int64_t start = 0; start < rows && !write_error; start += BLOCK * threads, batch++) {
        std::vector<Text> &set = sets[batch & 1];
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; t++) {
            int64_t first = std::min(rows, start + BLOCK * t), last = std::min(rows, first + BLOCK);
            pool.emplace_back(format, first, last, std::ref(set[size_t(t)]));
        }
        format(start, std::min(rows, start + BLOCK), set[0]);
        for (auto &t : pool)
            t.join();
        if (writer.joinable())
            writer.join();
        writer = std::thread(write_set, std::ref(set));
    }
    if (writer.joinable())
        writer.join();
    if (!write_error)
        write_set(sets[0]); // the header of a table without rows
    if (!write_error && !finish(output))
        write_error = errno;
    if (write_error)
        return write_error;
    int fd = output.fd;
    output.fd = -1;
    return close(fd) != 0 ? errno : 0;
}
}
