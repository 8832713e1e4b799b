// Writes a table as CSV byte for byte as Arrow's CSV writer does (analysis/csv_out.py is the caller
// and keeps Arrow for any table with a column kind not here): a header of quoted names; floats in
// their shortest round-trip form, in decimal from 1e-6 up to below 1e10 and in exponent form
// ("1e-7", "1.5e+10") outside; integers in decimal; true/false; text quoted with doubled quotes; an
// empty field for a missing value. Rows are formatted on every CPU, where Arrow writes a table on
// one: 15.3 M counter rows took 3.7 s (3.7 CPU-s) here against Arrow's 6.4 s (4.7 CPU-s), side by
// side.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// Column kinds (analysis/csv_out.py: _NATIVE_KINDS).
// Text is given as codes into a table of quoted texts, codes of 8, 16 or 32 bits as pandas keeps
// them.
enum Kind : int { K_F64 = 0, K_I64, K_I32, K_I16, K_I8, K_BOOL, K_TEXT8, K_TEXT16, K_TEXT32 };

// A finite or infinite double as Arrow writes it (double-conversion's shortest form with its
// decimal range).
void put_double(double v, std::string &out) {
    if (std::isinf(v)) {
        out += v > 0 ? "inf" : "-inf";
        return;
    }
    char buf[40];
    // Within the decimal range the shortest fixed form has the same digits (a double has one
    // shortest round-trip decimal; the range's ends 1e-6 and 1e10 are compared as doubles, as the
    // shortest form of a double below them is below them): one conversion instead of the exponent
    // form taken apart below.
    double size = std::fabs(v);
    if (size >= 1e-6 && size < 1e10) {
        out.append(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed).ptr);
        return;
    }
    auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    // buf: [-]d[.ddd]e(+|-)xx
    const char *p = buf;
    if (*p == '-') {
        out += '-';
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
    if (exponent >= -6 && exponent < 10) {
        if (exponent >= 0) {
            int whole = exponent + 1;
            if (n <= whole) {
                out.append(digits, size_t(n));
                out.append(size_t(whole - n), '0');
            } else {
                out.append(digits, size_t(whole));
                out += '.';
                out.append(digits + whole, size_t(n - whole));
            }
        } else {
            out += "0.";
            out.append(size_t(-exponent - 1), '0');
            out.append(digits, size_t(n));
        }
        return;
    }
    out += digits[0];
    if (n > 1) {
        out += '.';
        out.append(digits + 1, size_t(n - 1));
    }
    out += 'e';
    out += exponent < 0 ? '-' : '+';
    char ebuf[8];
    out.append(ebuf,
               std::to_chars(ebuf, ebuf + sizeof ebuf, exponent < 0 ? -exponent : exponent).ptr);
}

template <class T> void put_int(T v, std::string &out) {
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// Bytes written but not yet handed to the disk: their writeback is started every STARTED_EVERY
// bytes, so that the caller's fsync (sbcore/atomic.py) waits for the last of them only. Left
// alone, a gigabyte of CSV stays dirty in the page cache (far below the kernel's dirty limits) and
// that fsync waited 1.2-1.5 s with both CPUs idle at the end of an analysis.
constexpr size_t STARTED_EVERY = size_t(32) << 20;

struct Output {
    int fd;
    off_t written = 0, started = 0;
};

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

bool flush(Output &to, std::string &out) {
    int fd = to.fd;
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = write(fd, out.data() + done, out.size() - done);
        if (n < 0)
            return false;
        done += size_t(n);
    }
    to.written += off_t(done);
    start_writeback(to);
    out.clear();
    return true;
}

// Text number k (-1: missing, an empty field).
void put_text(int32_t k, const char *texts, const int64_t *offsets, std::string &out) {
    if (k >= 0)
        out.append(texts + offsets[k], size_t(offsets[k + 1] - offsets[k]));
}

void put_cell(int kind, const void *values, const char *texts, const int64_t *offsets, int64_t r,
              std::string &out) {
    switch (kind) {
    case K_F64: {
        double v = static_cast<const double *>(values)[r];
        if (!std::isnan(v))
            put_double(v, out); // NaN is pandas' missing value: an empty field
        break;
    }
    case K_I64:
        put_int(static_cast<const int64_t *>(values)[r], out);
        break;
    case K_I32:
        put_int(static_cast<const int32_t *>(values)[r], out);
        break;
    case K_I16:
        put_int(static_cast<const int16_t *>(values)[r], out);
        break;
    case K_I8:
        put_int(static_cast<const int8_t *>(values)[r], out);
        break;
    case K_BOOL:
        out += static_cast<const uint8_t *>(values)[r] ? "true" : "false";
        break;
    case K_TEXT8:
        put_text(static_cast<const int8_t *>(values)[r], texts, offsets, out);
        break;
    case K_TEXT16:
        put_text(static_cast<const int16_t *>(values)[r], texts, offsets, out);
        break;
    case K_TEXT32:
        put_text(static_cast<const int32_t *>(values)[r], texts, offsets, out);
        break;
    }
}

} // namespace

extern "C" {

// Writes `rows` rows of `columns` columns to a new file at `path`. Column c has kind kinds[c] and
// its values at data[c]: doubles (NaN: empty), integers, bools as bytes, or text as 8-, 16- or
// 32-bit codes (-1: empty) into texts[c], which holds the already quoted texts joined, text k from
// offsets[c][k] to offsets[c][k + 1]. `header` is the header line, quoted, with its newline. 0, or
// errno.
int sbw_write_csv(const char *path, const char *header, int64_t rows, int columns, const int *kinds,
                  const void *const *data, const char *const *texts, const int64_t *const *offsets,
                  int threads) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    // Blocks of rows are formatted by `threads` threads side by side into one set of strings while
    // a writer thread writes the previous set, in order: writing a file into the page cache is a
    // copy the kernel makes on the writing thread, an eighth of the time here.
    constexpr int64_t BLOCK = 1 << 15;
    threads = std::max(1, threads);
    std::vector<std::string> sets[2] = {std::vector<std::string>(size_t(threads)),
                                        std::vector<std::string>(size_t(threads))};
    sets[0][0] = header;
    auto format = [&](int64_t first, int64_t last, std::string &out_text) {
        // A string of this thread's own: appending to strings side by side in one vector would
        // bounce their cache line between the threads on every character.
        std::string text;
        text.swap(out_text);
        for (int64_t r = first; r < last; r++) {
            for (int c = 0; c < columns; c++) {
                if (c)
                    text += ',';
                put_cell(kinds[c], data[c], texts[c], offsets[c], r, text);
            }
            text += '\n';
        }
        text.swap(out_text);
    };
    int write_error = 0;
    Output output{fd};
    auto write_set = [&](std::vector<std::string> &set) {
        for (auto &text : set)
            if (!write_error && !flush(output, text))
                write_error = errno;
    };
    std::thread writer;
    int64_t batch = 0;
    for (int64_t start = 0; start < rows && !write_error; start += BLOCK * threads, batch++) {
        std::vector<std::string> &set = sets[batch & 1];
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
    if (write_error) {
        close(fd);
        return write_error;
    }
    if (close(fd) != 0)
        return errno;
    return 0;
}
}
