// JSON text of parsed values, for the reader's columns kept as one text per distinct value (params,
// placement, pinned CPUs, scheduling), and their comparison.
#include "record_cells.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace sbnative {

namespace {
void write_string(std::string_view s, std::string &out);
}

// JSON text of a value that msgspec decodes to the same Python value (ints stay ints, floats
// floats, keys in order, duplicates kept): distinct values are derived from it in Python.
void write_json(element e, std::string &out) {
    switch (e.type()) {
    case element_type::OBJECT: {
        out += '{';
        bool first = true;
        for (auto field : object(e)) {
            if (!first)
                out += ',';
            first = false;
            write_string(field.key, out);
            out += ':';
            write_json(field.value, out);
        }
        out += '}';
        break;
    }
    case element_type::ARRAY: {
        out += '[';
        bool first = true;
        for (element item : simdjson::dom::array(e)) {
            if (!first)
                out += ',';
            first = false;
            write_json(item, out);
        }
        out += ']';
        break;
    }
    case element_type::STRING:
        write_string(std::string_view(e), out);
        break;
    case element_type::INT64: {
        char buf[24];
        out.append(buf, std::to_chars(buf, buf + sizeof buf, int64_t(e)).ptr);
        break;
    }
    case element_type::UINT64: {
        char buf[24];
        out.append(buf, std::to_chars(buf, buf + sizeof buf, uint64_t(e)).ptr);
        break;
    }
    case element_type::DOUBLE: {
        char buf[32];
        auto end = std::to_chars(buf, buf + sizeof buf, double(e)).ptr;
        std::string_view s(buf, end - buf);
        out += s;
        if (s.find_first_of(".e") == std::string_view::npos)
            out += ".0"; // still a float to msgspec
        break;
    }
    case element_type::BOOL:
        out += bool(e) ? "true" : "false";
        break;
    case element_type::NULL_VALUE:
        out += "null";
        break;
    }
}

namespace {
void write_string(std::string_view s, std::string &out) {
    out += '"';
    size_t run = 0; // characters that need no escape are appended a run at a time
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += '\\';
            out += char(c);
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}
} // namespace

namespace {
constexpr uint64_t MASK = simdjson::internal::JSON_VALUE_MASK;

// A document's strings are stored in its string buffer in document order, each as a 32-bit length,
// the bytes and a NUL: the strings of a tape run x[i, end) are one stretch of it.
StringsSpan span_of(const uint64_t *x, size_t i, size_t end, const uint8_t *xs) {
    size_t first = SIZE_MAX, last = 0;
    for (; i < end; i++) {
        switch (char(x[i] >> 56)) {
        case '"':
            first = std::min(first, size_t(x[i] & MASK));
            last = std::max(last, size_t(x[i] & MASK));
            break;
        case 'l':
        case 'u':
        case 'd': // the bits in the next word
            i++;
            break;
        default:
            break;
        }
    }
    if (first == SIZE_MAX)
        return {};
    uint32_t n;
    std::memcpy(&n, xs + last, sizeof n);
    return {first, last, last + sizeof n + n + 1};
}
} // namespace

StringsSpan strings_span(element e) {
    simdjson::internal::tape_ref t = Tape::of(e);
    return span_of(t.doc->tape.get(), t.json_index, t.after_element(), t.doc->string_buf.get());
}

// simdjson keeps a parsed value as a run of 64-bit words on its document's tape: the kind in the
// top byte; a container's first and last word point at each other, a string's word at its length
// and bytes in the document's string buffer; a number takes a second word with its bits. Two runs
// are the same JSON value when their words are equal, the container pointers compared relative to
// each run's start and the strings by content: one pass over the words, where walking the values
// through the DOM interface took an eighth of the reader's time on a case's repeated scheduling
// and placement lists.
bool equal(element a, const StringsSpan &a_span, element b, StringsSpan &b_span) {
    simdjson::internal::tape_ref ta = Tape::of(a), tb = Tape::of(b);
    size_t i = ta.json_index, j = tb.json_index, end = ta.after_element();
    if (end - i != tb.after_element() - j)
        return false;
    const uint64_t *x = ta.doc->tape.get(), *y = tb.doc->tape.get();
    const uint8_t *xs = ta.doc->string_buf.get(), *ys = tb.doc->string_buf.get();
    // At the same place of both tapes (a runner's records of a case have one shape), equal words
    // are equal containers and numbers, and strings at the same offsets: a's stretch of strings is
    // b's, and the two stretches' bytes are all that is left to compare (lengths included). No walk
    // over the words: that took a tenth of the reader's time on placement lists of 128 threads.
    if (i == j && std::memcmp(x + i, y + j, (end - i) * sizeof *x) == 0) {
        // b has a string at a's last one's offset: the same length there first, so that b's
        // stretch is as long as a's
        if (a_span.end != a_span.first &&
            (std::memcmp(xs + a_span.last, ys + a_span.last, sizeof(uint32_t)) != 0 ||
             std::memcmp(xs + a_span.first, ys + a_span.first, a_span.end - a_span.first) != 0))
            return false;
        b_span = a_span;
        return true;
    }
    for (; i < end; i++, j++) {
        uint64_t w = x[i], v = y[j];
        if ((w >> 56) != (v >> 56))
            return false;
        switch (char(w >> 56)) {
        case '{':
        case '[': // element count (bits 32-55) and the index after the matching end
            if ((w >> 32) != (v >> 32) || uint32_t(w) - i != uint32_t(v) - j)
                return false;
            break;
        case '}':
        case ']': // the index of the matching start
            if (i - (w & MASK) != j - (v & MASK))
                return false;
            break;
        case '"': {
            const uint8_t *p = xs + (w & MASK), *q = ys + (v & MASK);
            uint32_t n, m;
            std::memcpy(&n, p, sizeof n);
            std::memcpy(&m, q, sizeof m);
            if (n != m || std::memcmp(p + sizeof n, q + sizeof m, n) != 0)
                return false;
            break;
        }
        case 'l':
        case 'u':
        case 'd': // the bits in the next word (-0.0 and 0.0 differ, as they are written)
            if (x[++i] != y[++j])
                return false;
            break;
        default: // true, false, null
            break;
        }
    }
    b_span = strings_span(b);
    return true;
}

} // namespace sbnative
