// JSON text of parsed values, for the reader's columns kept as one text per distinct value (params,
// placement, pinned CPUs, scheduling), and their comparison.
#include "record_cells.h"

#include <charconv>
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

bool equal(element a, element b) {
    if (a.type() != b.type())
        return false;
    switch (a.type()) {
    case element_type::OBJECT: {
        object x(a), y(b);
        if (x.size() != y.size())
            return false;
        auto i = x.begin(), j = y.begin();
        for (; i != x.end(); ++i, ++j)
            if (i.key() != j.key() || !equal(i.value(), j.value()))
                return false;
        return true;
    }
    case element_type::ARRAY: {
        simdjson::dom::array x(a), y(b);
        if (x.size() != y.size())
            return false;
        auto i = x.begin(), j = y.begin();
        for (; i != x.end(); ++i, ++j)
            if (!equal(*i, *j))
                return false;
        return true;
    }
    case element_type::STRING:
        return std::string_view(a) == std::string_view(b);
    case element_type::INT64:
        return int64_t(a) == int64_t(b);
    case element_type::UINT64:
        return uint64_t(a) == uint64_t(b);
    case element_type::DOUBLE: {
        double x = double(a), y = double(b);
        return std::memcmp(&x, &y, sizeof x) == 0; // -0.0 and 0.0 are written differently
    }
    case element_type::BOOL:
        return bool(a) == bool(b);
    case element_type::NULL_VALUE:
        return true;
    }
    return false;
}

} // namespace sbnative
