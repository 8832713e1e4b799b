// Types shared by the compiled record reader's files: the columns it fills (in the order
// analysis/records/native_reader.py names them), the cells of one record, and the functions that
// read a record (record_cells.cpp) and write JSON text (json_text.cpp).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sbnative {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

enum Tag : uint8_t { T_NULL = 0, T_FALSE, T_TRUE, T_INT, T_DBL, T_STR, T_UNSET };

// The columns, in the order analysis/records/native_reader.py names them (SLOTS there).
enum Slot : int {
    S_CASE_ID,
    S_REP,
// the plain fields of sbcore/record_fields.py (RAW_TEXT, RAW_NUMERIC), generated: one line there
// gives a field its slot here (analysis/records/native_fields.py, built by
// analysis/native/native.mk)
#define SB_PLAIN_FIELD(key, slot) slot,
#include "record_plain_fields.h"
#undef SB_PLAIN_FIELD
    S_SCHEDULE,
    S_SYNC,
    S_INNER,
    S_THREADS,
    S_RANKS,
    S_WARMUP,
    S_CASE_INDEX,
    S_N_WARMUP,
    S_BUILD_COMPILER,
    S_BUILD_FLAGS,
    S_RANK_WALL_MIN_S,
    S_RANK_WALL_MAX_S,
    S_PIN_STRATEGY,
    S_PIN_VIOLATIONS,
    S_COUNTERS_STATUS,
    S_COUNTERS_GROUP,
    S_COUNTERS_REASON,
    S_CLOCK_MAX_GHZ,
    S_PROBE_INT_MUL_MIN_S,
    S_PROBE_INT_MUL_MAX_S,
    S_PROBE_FP_LAT_MIN_S,
    S_PROBE_FP_LAT_MAX_S,
    S_PROBE_FP_TPUT_MIN_S,
    S_PROBE_FP_TPUT_MAX_S,
    S_PROBE_INT_ALU_MIN_S,
    S_PROBE_INT_ALU_MAX_S,
    S_PROBE_XFER_MIN_S,
    S_PROBE_XFER_MAX_S,
    S_PROBE_RUNQ_WAIT_S,
    S_PROBE_CPUS,
    S_SAMPLING_STOP,
    S_SLURM_JOB_ID,
    S_SLURM_ARRAY_TASK_ID,
    S_RECORD_LINE,
    // JSON text kept per distinct value (the Python side derives its columns once per value)
    S_PARAMS,
    S_PLACEMENT,
    S_PIN_CPUS,
    S_SCHED,
    S_RESULT,
    N_SLOTS
};

// Per-metric counter stats of one record: sum, min, max, avg.
constexpr int N_STATS = 4;

struct Refused {}; // thrown where a record does not have the ordinary shape: the file is refused

// Cells of one column: a kind and 8 bytes (an int64, a double's bits or a string's number).
struct Column {
    std::vector<uint8_t> tag;
    std::vector<int64_t> val;
};

// Looks strings up by string_view, without building a std::string per lookup.
struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
        return std::hash<std::string_view>{}(s);
    }
};

// Distinct strings of a column, numbered as first seen. A column mostly repeats the previous row's
// string (a case's records share most fields): that one is compared before any hashing.
struct Strings {
    std::unordered_map<std::string, int32_t, ViewHash, std::equal_to<>> number;
    std::vector<std::string> text;
    int32_t last = -1;
    int32_t add(std::string_view s) {
        if (last >= 0 && text[size_t(last)] == s)
            return last;
        auto it = number.find(s);
        if (it != number.end())
            return last = it->second;
        int32_t k = int32_t(text.size());
        text.emplace_back(s);
        number.emplace(text.back(), k);
        return last = k;
    }
};

// What one group of files gives: rows of cells, counter entries, per-hwthread values. Aligned to a
// cache line: the threads fill neighbouring parts.
struct alignas(64) Part {
    Column col[N_SLOTS];
    Strings str[N_SLOTS];
    // counter metrics of records with status "ok": one entry per (record, metric)
    std::vector<int64_t> entry_row;
    std::vector<int32_t> entry_name; // in metric_names
    Column entry_stat[N_STATS];
    Strings entry_stat_str[N_STATS];
    Strings metric_names;
    std::vector<uint8_t> entry_has_values; // per_hwthread given (not null): part of the long table
    std::vector<int64_t> entry_len;        // its number of values
    std::vector<int32_t> hw_thread;
    std::vector<double> hw_value;
    int64_t rows = 0;
    bool any_rank_wall = false;
};

// One record being read: its cells, committed to the part only when the whole file is taken.
constexpr int FIRST_JSON = S_PARAMS, N_JSON = N_SLOTS - S_PARAMS;

struct FieldInfo; // what the reader does with a field of a record (record_cells.cpp)

// The stretch of its document's string buffer a parsed value's strings take (first == end: none),
// and where the last of them starts.
struct StringsSpan {
    size_t first = 0, last = 0, end = 0;
};

struct Cells {
    // The record's field names in order (views into its parsed line) and what each is: the next
    // line's names are compared with these before any table is searched.
    std::vector<std::string_view> keys;
    std::vector<const FieldInfo *> fields;
    uint8_t tag[N_SLOTS];
    int64_t val[N_SLOTS];
    std::string text[N_SLOTS]; // string cells (T_STR) and JSON texts
    // The JSON-text columns' values as parsed (absent: not given) and whether each equals the
    // previous line's: a case repeats them on every line, so they are written out as text once per
    // file.
    element json[N_JSON];
    StringsSpan strings[N_JSON]; // where each one's strings are in its document (see equal)
    bool given[N_JSON];
    bool same[N_JSON];
    int32_t id[N_JSON];
};

// Counter entries of one record, kept aside until its file is taken.
struct Entry {
    std::string name;
    uint8_t tag[N_STATS];
    int64_t val[N_STATS];
    std::string text[N_STATS];
    bool has_values = false;
    std::vector<int32_t> thread;
    std::vector<double> value;
};

// A record's counter entries. The reader reads a million records with a thread-local set of these:
// an entry's name and value lists are kept from record to record, refilled instead of allocated.
struct Entries {
    std::vector<Entry> items;
    size_t size = 0;
    Entry &add() {
        if (size == items.size())
            items.emplace_back();
        Entry &e = items[size++];
        e.has_values = false;
        e.thread.clear();
        e.value.clear();
        return e;
    }
    void clear() {
        size = 0;
    }
    Entry *begin() {
        return items.data();
    }
    Entry *end() {
        return items.data() + size;
    }
};

// One line's record into cells and counter entries (throws Refused where it is not ordinary);
// `prev` is the previous line's cells, whose parsed values are still readable (the reader
// alternates parsers).
void read_record(element rec, std::string_view case_dir, Cells &c, const Cells *prev,
                 Entries &entries, bool &rank_wall);

// JSON text of a value that msgspec decodes to the same Python value (json_text.cpp).
void write_json(element e, std::string &out);

// Whether two parsed values are the same JSON value, down to each number's kind and bits; `a_span`
// is where a's strings are (strings_span(a)). When they are, b's span goes into `b_span`.
bool equal(element a, const StringsSpan &a_span, element b, StringsSpan &b_span);

// Where a parsed value's strings are in its document's string buffer.
StringsSpan strings_span(element e);

// A parsed value's place on its document's tape, for equal(). simdjson keeps it private to the
// element and lets its string_builder template read it: this specialization is the only code that
// does (every other read goes through the DOM interface).
struct Tape;

} // namespace sbnative

template <> class simdjson::internal::string_builder<sbnative::Tape> {
  public:
    static simdjson::internal::tape_ref of(simdjson::dom::element e) {
        return e.tape;
    }
};

namespace sbnative {
struct Tape : simdjson::internal::string_builder<Tape> {};
} // namespace sbnative
