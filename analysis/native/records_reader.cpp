// Reads the records.jsonl files of a campaign into columns, in C++ with simdjson, for the
// analysis's loader (analysis/native_records.py holds the Python side and the column rules).
//
// It is a fast path, never a judge: a file is either taken whole, exactly as
// analysis/record_decode.py and analysis/flatten.py would read it, or refused, and the loader then
// reads the refused files with the Python path, which names every problem. So anything out of the
// ordinary refuses the file: a truncated or blank line, invalid JSON, a record the schema rejects,
// a field of an unexpected shape, a repetition twice, a case_id that is not its directory's.
//
// Values keep their JSON kind (tag) so that Python can type each column as pandas would have typed
// the decoded values. simdjson's DOM parser validates the whole line (UTF-8, structure, every
// number), as msgspec does, so a refusal never depends on which fields are read.
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <memory>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

namespace {

// Kinds of a cell; the Python side maps a column's set of kinds to a dtype.
enum Tag : uint8_t { T_NULL = 0, T_FALSE, T_TRUE, T_INT, T_DBL, T_STR, T_UNSET };

// The columns, in the order analysis/native_records.py names them (SLOTS there).
enum Slot : int {
    S_CASE_ID,
    S_REP,
    S_CAMPAIGN,
    S_NODE_TYPE,
    S_HOSTNAME,
    S_HOST,
    S_KERNEL,
    S_LANG,
    S_MODEL,
    S_CHECKSUM,
    S_STARTED,
    S_INNER_PATH,
    S_UARCH,
    S_WALL_S,
    S_SETUP_S,
    S_CPU_USER_S,
    S_CPU_SYS_S,
    S_CTX_VOLUNTARY,
    S_CTX_INVOLUNTARY,
    S_OS_THREADS,
    S_WORK,
    S_TIMER_RES_S,
    S_RUNNER_WALL_S,
    S_EXIT_STATUS,
    S_CLOCK_GHZ,
    S_INVOCATION,
    S_IN_PROCESS_REP,
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

// Distinct strings of a column, numbered as first seen.
struct Strings {
    std::unordered_map<std::string, int32_t, ViewHash, std::equal_to<>> number;
    std::vector<std::string> text;
    int32_t add(std::string_view s) {
        auto it = number.find(s);
        if (it != number.end())
            return it->second;
        int32_t k = int32_t(text.size());
        text.emplace_back(s);
        number.emplace(text.back(), k);
        return k;
    }
};

// What one group of files gives: rows of cells, counter entries, per-hwthread values.
struct Part {
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
void write_json(element e, std::string &out);

constexpr int FIRST_JSON = S_PARAMS, N_JSON = N_SLOTS - S_PARAMS;

struct Cells {
    uint8_t tag[N_SLOTS];
    int64_t val[N_SLOTS];
    std::string text[N_SLOTS]; // string cells (T_STR) and JSON texts
    // The JSON-text columns' values as parsed (absent: not given) and whether each equals the
    // previous line's: a case repeats them on every line, so they are written out as text once per
    // file.
    element json[N_JSON];
    bool given[N_JSON];
    bool same[N_JSON];
    int32_t id[N_JSON];
};

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

// A JSON-text column's value: written out unless it equals the previous line's.
void json_cell(Cells &c, const Cells *prev, int slot, element v) {
    int k = slot - FIRST_JSON;
    c.json[k] = v;
    c.given[k] = true;
    c.same[k] = prev && prev->given[k] && equal(prev->json[k], v);
    if (!c.same[k]) {
        c.text[slot].clear();
        write_json(v, c.text[slot]);
    }
}

int64_t bits(double d) {
    int64_t i;
    std::memcpy(&i, &d, sizeof i);
    return i;
}

void write_string(std::string_view s, std::string &out);

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

// The field `key` of an object into `found` (false when absent); a key given twice is refused
// (which one a decoder keeps is its own business).
bool find(object obj, std::string_view key, element &found) {
    bool seen = false;
    for (auto field : obj) {
        if (field.key == key) {
            if (seen)
                throw Refused{};
            seen = true;
            found = field.value;
        }
    }
    return seen;
}

// A JSON scalar as a cell; objects, arrays and integers beyond int64 are refused.
void scalar(Cells &c, int slot, element e) {
    switch (e.type()) {
    case element_type::NULL_VALUE:
        c.tag[slot] = T_NULL;
        return;
    case element_type::BOOL:
        c.tag[slot] = bool(e) ? T_TRUE : T_FALSE;
        return;
    case element_type::INT64:
        c.tag[slot] = T_INT;
        c.val[slot] = int64_t(e);
        return;
    case element_type::DOUBLE:
        c.tag[slot] = T_DBL;
        c.val[slot] = bits(double(e));
        return;
    case element_type::STRING:
        c.tag[slot] = T_STR;
        c.text[slot].assign(std::string_view(e));
        return;
    default:
        throw Refused{};
    }
}

void scalar_in(Cells &c, int slot, element parent, std::string_view key) {
    element e;
    if (parent.type() == element_type::OBJECT && find(object(parent), key, e))
        scalar(c, slot, e);
    else
        c.tag[slot] = T_NULL;
}

void set_double(Cells &c, int slot, double d) {
    c.tag[slot] = T_DBL;
    c.val[slot] = bits(d);
}

void set_int(Cells &c, int slot, int64_t i) {
    c.tag[slot] = T_INT;
    c.val[slot] = i;
}

bool is_number(element e) {
    return e.type() == element_type::INT64 || e.type() == element_type::DOUBLE;
}

double number(element e) {
    return e.type() == element_type::INT64 ? double(int64_t(e)) : double(e);
}

// Python's len(x or ()) of a list-or-null field; other kinds are refused.
int64_t list_length(element e) {
    if (e.type() == element_type::NULL_VALUE)
        return 0;
    if (e.type() != element_type::ARRAY)
        throw Refused{};
    return int64_t(simdjson::dom::array(e).size());
}

// Python's bool(x).
bool truthy(element e) {
    switch (e.type()) {
    case element_type::NULL_VALUE:
        return false;
    case element_type::BOOL:
        return bool(e);
    case element_type::INT64:
        return int64_t(e) != 0;
    case element_type::UINT64:
        return true;
    case element_type::DOUBLE:
        return double(e) != 0.0;
    case element_type::STRING:
        return !std::string_view(e).empty();
    case element_type::ARRAY:
        return simdjson::dom::array(e).size() != 0;
    case element_type::OBJECT:
        return object(e).size() != 0;
    }
    return false;
}

// The smallest or largest element of a list of numbers as Python's min/max give it: the first of
// equal ones, with its own kind (an int stays an int).
void extreme(Cells &c, int slot, simdjson::dom::array items, bool largest) {
    bool have = false;
    double best = 0;
    element best_e;
    for (element item : items) {
        // beyond 2^53 an int and a double compare differently in Python than here
        if (!is_number(item) ||
            (item.type() == element_type::INT64 && std::llabs(int64_t(item)) > (1ll << 53)))
            throw Refused{};
        double v = number(item);
        if (!have || (largest ? v > best : v < best)) {
            have = true;
            best = v;
            best_e = item;
        }
    }
    if (best_e.type() == element_type::INT64)
        set_int(c, slot, int64_t(best_e));
    else
        set_double(c, slot, best);
}

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

bool unmeasured(std::string_view s) { // what likwid prints where it measured nothing
    return s == "-" || s == "nan" || s == "NaN" || s == "-nan" || s == "null";
}

void read_metric(std::string_view name, element metric, std::vector<Entry> &entries) {
    if (metric.type() != element_type::OBJECT)
        throw Refused{};
    Entry entry;
    entry.name = std::string(name);
    Cells scratch;
    static const char *stats[N_STATS] = {"sum", "min", "max", "avg"};
    for (int s = 0; s < N_STATS; s++) {
        scalar_in(scratch, 0, metric, stats[s]);
        entry.tag[s] = scratch.tag[0];
        entry.val[s] = scratch.val[0];
        entry.text[s] = std::move(scratch.text[0]);
    }
    element values;
    if (find(object(metric), "per_hwthread", values) && values.type() != element_type::NULL_VALUE) {
        // {"<hwthread>": number | null | "-" | "nan", ...}; an empty object is refused (the Python
        // path tells "{}" from "{ }", which the parsed value cannot)
        if (values.type() != element_type::OBJECT || object(values).size() == 0)
            throw Refused{};
        entry.has_values = true;
        for (auto field : object(values)) {
            std::string_view key = field.key;
            int32_t thread = 0;
            auto [end, err] = std::from_chars(key.data(), key.data() + key.size(), thread);
            if (err != std::errc() || end != key.data() + key.size() || key.empty() ||
                key[0] == '-')
                throw Refused{};
            element v = field.value;
            double d;
            if (is_number(v))
                d = number(v);
            else if (v.type() == element_type::NULL_VALUE ||
                     (v.type() == element_type::STRING && unmeasured(std::string_view(v))))
                d = std::nan("");
            else
                throw Refused{};
            entry.thread.push_back(thread);
            entry.value.push_back(d);
        }
    }
    entries.push_back(std::move(entry));
}

enum Field : int {
    F_SCHEMA,
    F_KERNEL,
    F_LANG,
    F_MODEL,
    F_THREADS,
    F_RANKS,
    F_PARAMS,
    F_REP,
    F_WALL_S,
    F_CHECKSUM,
    F_CASE_ID,
    F_STATUS,
    F_OTHER_SCALAR, // a field copied as it is
    F_WARMUP,
    F_WARMUP_WALL_S,
    F_BUILD,
    F_RANK_WALL_S,
    F_PLACEMENT,
    F_PIN,
    F_COUNTERS,
    F_SLURM,
    F_CLOCK,
    F_PROBE,
    F_SAMPLING,
    F_SCHED,
    F_LOAD,
};

struct FieldInfo {
    Field field;
    int slot; // the cell of a copied field
    int bit;  // for "given twice"
};

const std::unordered_map<std::string_view, FieldInfo> &fields() {
    static const std::unordered_map<std::string_view, FieldInfo> table = [] {
        std::unordered_map<std::string_view, FieldInfo> t;
        int bit = 0;
        auto add = [&](std::string_view name, Field f, int slot) { t[name] = {f, slot, bit++}; };
        add("schema", F_SCHEMA, -1);
        add("kernel", F_KERNEL, S_KERNEL);
        add("lang", F_LANG, S_LANG);
        add("model", F_MODEL, S_MODEL);
        add("threads", F_THREADS, S_THREADS);
        add("ranks", F_RANKS, S_RANKS);
        add("params", F_PARAMS, S_PARAMS);
        add("rep", F_REP, S_REP);
        add("wall_s", F_WALL_S, S_WALL_S);
        add("checksum", F_CHECKSUM, S_CHECKSUM);
        add("case_id", F_CASE_ID, S_CASE_ID);
        add("status", F_STATUS, -1);
        add("campaign", F_OTHER_SCALAR, S_CAMPAIGN);
        add("node_type", F_OTHER_SCALAR, S_NODE_TYPE);
        add("hostname", F_OTHER_SCALAR, S_HOSTNAME);
        add("host", F_OTHER_SCALAR, S_HOST);
        add("started", F_OTHER_SCALAR, S_STARTED);
        add("setup_s", F_OTHER_SCALAR, S_SETUP_S);
        add("cpu_user_s", F_OTHER_SCALAR, S_CPU_USER_S);
        add("cpu_sys_s", F_OTHER_SCALAR, S_CPU_SYS_S);
        add("ctx_voluntary", F_OTHER_SCALAR, S_CTX_VOLUNTARY);
        add("ctx_involuntary", F_OTHER_SCALAR, S_CTX_INVOLUNTARY);
        add("os_threads", F_OTHER_SCALAR, S_OS_THREADS);
        add("work", F_OTHER_SCALAR, S_WORK);
        add("timer_res_s", F_OTHER_SCALAR, S_TIMER_RES_S);
        add("runner_wall_s", F_OTHER_SCALAR, S_RUNNER_WALL_S);
        add("exit_status", F_OTHER_SCALAR, S_EXIT_STATUS);
        add("clock_ghz", F_OTHER_SCALAR, S_CLOCK_GHZ);
        add("invocation", F_OTHER_SCALAR, S_INVOCATION);
        add("in_process_rep", F_OTHER_SCALAR, S_IN_PROCESS_REP);
        add("schedule", F_OTHER_SCALAR, S_SCHEDULE);
        add("sync", F_OTHER_SCALAR, S_SYNC);
        add("inner", F_OTHER_SCALAR, S_INNER);
        add("case_index", F_OTHER_SCALAR, S_CASE_INDEX);
        add("inner_path", F_OTHER_SCALAR, S_INNER_PATH);
        add("uarch", F_OTHER_SCALAR, S_UARCH);
        add("warmup", F_WARMUP, S_WARMUP);
        add("warmup_wall_s", F_WARMUP_WALL_S, S_N_WARMUP);
        add("build", F_BUILD, -1);
        add("rank_wall_s", F_RANK_WALL_S, -1);
        add("placement", F_PLACEMENT, S_PLACEMENT);
        add("pin", F_PIN, -1);
        add("counters", F_COUNTERS, -1);
        add("slurm", F_SLURM, -1);
        add("clock", F_CLOCK, -1);
        add("probe", F_PROBE, -1);
        add("sampling", F_SAMPLING, -1);
        add("sched", F_SCHED, S_SCHED);
        add("load", F_LOAD, -1);
        return t;
    }();
    return table;
}

constexpr uint64_t REQUIRED = (1ull << 12) - 1; // schema .. status: the first twelve bits

std::string_view text_of(element e) {
    if (e.type() != element_type::STRING)
        throw Refused{};
    return std::string_view(e);
}

int64_t int_at_least(element e, int64_t low) {
    if (e.type() != element_type::INT64 || int64_t(e) < low)
        throw Refused{};
    return int64_t(e);
}

void read_probe(Cells &c, element probe) {
    static const int extremes[3][2] = {{S_PROBE_INT_MUL_MIN_S, S_PROBE_INT_MUL_MAX_S},
                                       {S_PROBE_FP_LAT_MIN_S, S_PROBE_FP_LAT_MAX_S},
                                       {S_PROBE_FP_TPUT_MIN_S, S_PROBE_FP_TPUT_MAX_S}};
    static const char *chains[3] = {"int_mul", "fp_lat", "fp_tput"};
    for (auto &pair : extremes)
        c.tag[pair[0]] = c.tag[pair[1]] = T_NULL;
    c.tag[S_PROBE_RUNQ_WAIT_S] = c.tag[S_PROBE_CPUS] = T_NULL;
    if (probe.type() == element_type::NULL_VALUE)
        return;
    if (probe.type() != element_type::OBJECT)
        throw Refused{};
    // Only probes whose kernel wrote every extreme: older ones are derived from the arrays in
    // Python.
    static const char *sides[2] = {"min_s", "max_s"};
    for (int m = 0; m < 2; m++) {
        element own;
        if (!find(object(probe), sides[m], own) || own.type() != element_type::OBJECT)
            throw Refused{};
        for (int k = 0; k < 3; k++) {
            element t;
            if (!find(object(own), chains[k], t) || !is_number(t))
                throw Refused{};
            set_double(c, extremes[k][m], number(t));
        }
    }
    static thread_local std::vector<int64_t> cpus;
    cpus.clear();
    for (const char *name : {"before", "after"}) {
        element side, list;
        if (!find(object(probe), name, side) || side.type() == element_type::NULL_VALUE)
            continue;
        if (side.type() != element_type::OBJECT)
            throw Refused{};
        if (!find(object(side), "cpus", list) || list.type() == element_type::NULL_VALUE)
            continue;
        if (list.type() != element_type::ARRAY)
            throw Refused{};
        for (element cpu : simdjson::dom::array(list)) {
            if (cpu.type() != element_type::INT64)
                throw Refused{};
            cpus.push_back(int64_t(cpu));
        }
    }
    std::sort(cpus.begin(), cpus.end());
    int64_t distinct = std::unique(cpus.begin(), cpus.end()) - cpus.begin();
    if (distinct)
        set_int(c, S_PROBE_CPUS, distinct);
    scalar_in(c, S_PROBE_RUNQ_WAIT_S, probe, "runq_wait_s");
}

// One line's record into cells (and counter entries); Refused where it is not ordinary.
void read_record(element rec, std::string_view case_dir, Cells &c, const Cells *prev,
                 std::vector<Entry> &entries, bool &rank_wall) {
    if (rec.type() != element_type::OBJECT)
        throw Refused{};
    for (int s = 0; s < N_SLOTS; s++)
        c.tag[s] = T_NULL;
    c.tag[S_SCHEDULE] = c.tag[S_SYNC] = c.tag[S_INNER] = T_UNSET;
    c.tag[S_WARMUP] = T_FALSE;
    set_int(c, S_N_WARMUP, 0);
    set_int(c, S_PIN_VIOLATIONS, 0);
    for (int k = 0; k < N_JSON; k++) {
        c.tag[FIRST_JSON + k] = T_STR;
        c.given[k] = false;
        c.same[k] = prev && !prev->given[k]; // absent twice: "null" twice
        if (!c.same[k])
            c.text[FIRST_JSON + k] = "null";
    }
    element clock, probe, counters;
    bool has_clock = false, has_probe = false, has_counters = false;
    uint64_t seen = 0;
    const auto &table = fields();
    for (auto field : object(rec)) {
        auto it = table.find(field.key);
        if (it == table.end())
            continue; // a field the analysis does not read
        const FieldInfo &info = it->second;
        if (seen & (1ull << info.bit))
            throw Refused{};
        seen |= 1ull << info.bit;
        element v = field.value;
        switch (info.field) {
        case F_SCHEMA:
            if (text_of(v) != "scalebench.run/1")
                throw Refused{};
            break;
        case F_STATUS:
            if (text_of(v) != "ok")
                throw Refused{};
            break;
        case F_KERNEL:
        case F_LANG:
        case F_MODEL:
        case F_CHECKSUM:
            text_of(v);
            scalar(c, info.slot, v);
            break;
        case F_CASE_ID:
            if (text_of(v) != case_dir)
                throw Refused{};
            scalar(c, info.slot, v);
            break;
        case F_THREADS:
        case F_RANKS:
            set_int(c, info.slot, int_at_least(v, 1));
            break;
        case F_REP:
            set_int(c, info.slot, int_at_least(v, 0));
            break;
        case F_WALL_S:
            if (!is_number(v) || !(number(v) > 0))
                throw Refused{};
            set_double(c, info.slot, number(v));
            break;
        case F_PARAMS:
            if (v.type() != element_type::OBJECT)
                throw Refused{};
            [[fallthrough]];
        case F_PLACEMENT:
        case F_SCHED:
            json_cell(c, prev, info.slot, v);
            break;
        case F_OTHER_SCALAR:
            scalar(c, info.slot, v);
            break;
        case F_WARMUP:
            c.tag[S_WARMUP] = truthy(v) ? T_TRUE : T_FALSE;
            break;
        case F_WARMUP_WALL_S:
            set_int(c, S_N_WARMUP, list_length(v));
            break;
        case F_BUILD:
            scalar_in(c, S_BUILD_COMPILER, v, "compiler");
            scalar_in(c, S_BUILD_FLAGS, v, "flags");
            break;
        case F_RANK_WALL_S:
            if (v.type() == element_type::NULL_VALUE)
                break;
            if (v.type() != element_type::ARRAY)
                throw Refused{};
            if (simdjson::dom::array(v).size() == 0)
                break;
            rank_wall = true;
            extreme(c, S_RANK_WALL_MIN_S, v, false);
            extreme(c, S_RANK_WALL_MAX_S, v, true);
            break;
        case F_PIN: {
            if (v.type() == element_type::NULL_VALUE)
                break;
            if (v.type() != element_type::OBJECT)
                throw Refused{};
            scalar_in(c, S_PIN_STRATEGY, v, "strategy");
            element e;
            if (find(object(v), "cpus", e))
                json_cell(c, prev, S_PIN_CPUS, e);
            if (find(object(v), "violations", e))
                set_int(c, S_PIN_VIOLATIONS, list_length(e));
            break;
        }
        case F_COUNTERS:
            if (v.type() == element_type::NULL_VALUE)
                break;
            if (v.type() != element_type::OBJECT)
                throw Refused{};
            has_counters = true;
            counters = v;
            break;
        case F_SLURM:
            scalar_in(c, S_SLURM_JOB_ID, v, "job_id");
            scalar_in(c, S_SLURM_ARRAY_TASK_ID, v, "array_task_id");
            break;
        case F_CLOCK:
            has_clock = true;
            clock = v;
            break;
        case F_PROBE:
            has_probe = true;
            probe = v;
            break;
        case F_SAMPLING:
            scalar_in(c, S_SAMPLING_STOP, v, "stop");
            break;
        case F_LOAD:
            if (v.type() != element_type::NULL_VALUE)
                throw Refused{}; // rows of their own: Python path
            break;
        }
    }
    if ((seen & REQUIRED) != REQUIRED)
        throw Refused{};
    if (has_probe)
        read_probe(c, probe);
    // The higher clock reading around the compute region, else clock_ghz (analysis/flatten.py).
    c.tag[S_CLOCK_MAX_GHZ] = c.tag[S_CLOCK_GHZ];
    c.val[S_CLOCK_MAX_GHZ] = c.val[S_CLOCK_GHZ];
    c.text[S_CLOCK_MAX_GHZ] = c.text[S_CLOCK_GHZ];
    if (has_clock && clock.type() == element_type::OBJECT) {
        bool have = false;
        element best;
        for (const char *name : {"before_ghz", "after_ghz"}) {
            element r;
            if (!find(object(clock), name, r))
                continue;
            if (r.type() == element_type::BOOL)
                throw Refused{};
            if (is_number(r) && number(r) > 0 && (!have || number(r) > number(best))) {
                have = true;
                best = r;
            }
        }
        if (have)
            scalar(c, S_CLOCK_MAX_GHZ, best);
    }
    if (has_counters) {
        scalar_in(c, S_COUNTERS_STATUS, counters, "status");
        scalar_in(c, S_COUNTERS_GROUP, counters, "group");
        scalar_in(c, S_COUNTERS_REASON, counters, "reason");
        element metrics;
        if (find(object(counters), "metrics", metrics) &&
            metrics.type() != element_type::NULL_VALUE) {
            if (metrics.type() != element_type::OBJECT)
                throw Refused{};
            std::unordered_set<std::string_view> names;
            std::vector<Entry> mine;
            for (auto field : object(metrics)) {
                if (!names.insert(field.key).second)
                    throw Refused{};
                read_metric(field.key, field.value, mine);
            }
            bool ok = c.tag[S_COUNTERS_STATUS] == T_STR && c.text[S_COUNTERS_STATUS] == "ok";
            if (ok)
                for (auto &e : mine)
                    entries.push_back(std::move(e));
        }
    }
}

struct Job {
    std::string path;
    std::string case_dir;
    int64_t size; // bytes to read (-1: all)
};

// One file into its rows; false (and nothing added) when the file is refused.
// A file's first `size` bytes (-1: all), mapped: no copy out of the page cache (a fifth of the
// reading time with read()). The whole file is mapped, so the bytes after the last line read are
// there as simdjson's padding unless the mapping ends within it (see padded_line).
struct Mapped {
    const char *data = nullptr;
    size_t len = 0;      // bytes to read
    size_t readable = 0; // bytes that may be touched: to the end of the mapping's last page
    size_t mapped = 0;
    explicit Mapped(const Job &job) {
        int fd = open(job.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size > 0 && (job.size < 0 || job.size <= st.st_size)) {
            void *p =
                mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
            if (p != MAP_FAILED) {
                data = static_cast<const char *>(p);
                mapped = size_t(st.st_size);
                len = job.size < 0 ? mapped : size_t(job.size);
                size_t page = size_t(sysconf(_SC_PAGESIZE));
                readable = (mapped + page - 1) / page * page;
            }
        }
        close(fd);
    }
    ~Mapped() {
        if (data)
            munmap(const_cast<char *>(data), mapped);
    }
    Mapped(const Mapped &) = delete;
    Mapped &operator=(const Mapped &) = delete;
};

bool read_file(const Job &job, simdjson::dom::parser (&parsers)[2], std::vector<char> &buf,
               Part &part) {
    Mapped file(job);
    if (!file.data)
        return false;
    const char *data = file.data;
    size_t len = file.len;
    if (len == 0 || data[len - 1] != '\n')
        return false; // empty, or a last line without its newline
    // Cells and entries are reused from file to file (their strings keep their buffers).
    static thread_local std::vector<Cells> rows;
    static thread_local std::vector<std::vector<Entry>> entries;
    size_t used = 0;
    bool rank_wall = false;
    std::unordered_set<int64_t> reps;
    try {
        size_t start = 0;
        int64_t line = 0;
        while (start < len) {
            size_t end = size_t(
                static_cast<const char *>(std::memchr(data + start, '\n', len - start)) - data);
            line++;
            std::string_view text(data + start, end - start);
            if (text.find_first_not_of(" \t\r") == std::string_view::npos)
                return false; // blank line
            const char *at = data + start;
            if (end + simdjson::SIMDJSON_PADDING >
                file.readable) { // too near the mapping's end: a padded copy
                buf.assign(text.begin(), text.end());
                buf.resize(text.size() + simdjson::SIMDJSON_PADDING);
                at = buf.data();
            }
            element rec;
            // two parsers in turn: the previous line's values stay readable for json_cell
            if (parsers[used & 1].parse(at, text.size(), false).get(rec))
                return false;
            if (used == rows.size()) {
                rows.emplace_back();
                entries.emplace_back();
            }
            Cells &cells = rows[used];
            entries[used].clear();
            read_record(rec, job.case_dir, cells, used ? &rows[used - 1] : nullptr, entries[used],
                        rank_wall);
            used++;
            if (!reps.insert(cells.val[S_REP]).second)
                return false; // a repetition twice
            set_int(cells, S_RECORD_LINE, line);
            start = end + 1;
        }
    } catch (const Refused &) {
        return false;
    } catch (const simdjson::simdjson_error &) {
        return false;
    }
    // Rows by repetition, as the Python path orders them.
    std::vector<size_t> order(used);
    for (size_t i = 0; i < order.size(); i++)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rows[a].val[S_REP] < rows[b].val[S_REP]; });
    for (size_t i = 0; i < used;
         i++) // JSON texts numbered in line order: a repeated one is not looked up
        for (int k = 0; k < N_JSON; k++)
            rows[i].id[k] = rows[i].same[k]
                                ? rows[i - 1].id[k]
                                : part.str[FIRST_JSON + k].add(rows[i].text[FIRST_JSON + k]);
    for (size_t i : order) {
        Cells &c = rows[i];
        for (int s = 0; s < N_SLOTS; s++) {
            part.col[s].tag.push_back(c.tag[s]);
            int64_t v = s >= FIRST_JSON     ? c.id[s - FIRST_JSON]
                        : c.tag[s] == T_STR ? part.str[s].add(c.text[s])
                                            : c.val[s];
            part.col[s].val.push_back(v);
        }
        for (Entry &e : entries[i]) {
            part.entry_row.push_back(part.rows);
            part.entry_name.push_back(part.metric_names.add(e.name));
            for (int s = 0; s < N_STATS; s++) {
                part.entry_stat[s].tag.push_back(e.tag[s]);
                part.entry_stat[s].val.push_back(
                    e.tag[s] == T_STR ? part.entry_stat_str[s].add(e.text[s]) : e.val[s]);
            }
            part.entry_has_values.push_back(e.has_values);
            part.entry_len.push_back(int64_t(e.thread.size()));
            part.hw_thread.insert(part.hw_thread.end(), e.thread.begin(), e.thread.end());
            part.hw_value.insert(part.hw_value.end(), e.value.begin(), e.value.end());
        }
        part.rows++;
    }
    part.any_rank_wall |= rank_wall;
    return true;
}

// One column of every part, in order, into `tags` and `vals` (strings renumbered into `global`),
// freeing the parts' copies as it goes.
template <class Pick, class PickStrings>
void export_column(std::vector<Part> &parts, Pick column_of, PickStrings strings_of,
                   Strings &global, uint8_t *tags, int64_t *vals) {
    size_t at = 0;
    for (Part &p : parts) {
        Column &c = column_of(p);
        Strings &local = strings_of(p);
        std::vector<int32_t> renumber(local.text.size());
        for (size_t k = 0; k < renumber.size(); k++)
            renumber[k] = global.add(local.text[k]);
        for (size_t i = 0; i < c.tag.size(); i++, at++) {
            tags[at] = c.tag[i];
            vals[at] = c.tag[i] == T_STR ? renumber[size_t(c.val[i])] : c.val[i];
        }
        c = Column();
        local = Strings();
    }
}

// Drops a part's growth slack once its files are read (a third of a million rows' memory
// otherwise).
void shrink(Part &p) {
    for (auto &c : p.col) {
        c.tag.shrink_to_fit();
        c.val.shrink_to_fit();
    }
    for (auto &c : p.entry_stat) {
        c.tag.shrink_to_fit();
        c.val.shrink_to_fit();
    }
    p.entry_row.shrink_to_fit();
    p.entry_name.shrink_to_fit();
    p.entry_has_values.shrink_to_fit();
    p.entry_len.shrink_to_fit();
    p.hw_thread.shrink_to_fit();
    p.hw_value.shrink_to_fit();
}

} // namespace

// ---- C interface (ctypes)
// --------------------------------------------------------------------------- The reader's result:
// parts of 16 files each in file order, exported a column at a time into arrays Python allocates
// (no merged copy of a million rows is ever held beside the parts).
struct sbr_result {
    std::vector<Part> parts;
    std::vector<uint8_t> taken;         // per file
    Strings strings[N_SLOTS + N_STATS]; // a column's distinct strings once exported
    Strings metric_names;
    int exported = 0; // columns handed out so far
    std::string flat; // joined strings handed out by sbr_strings
    std::vector<int64_t> offsets;
};

extern "C" {

int sbr_slots() {
    return N_SLOTS;
}

// Reads files[i] (at most sizes[i] bytes; -1: all) of case directory case_dirs[i] with `threads`
// threads.
sbr_result *sbr_read(int64_t n, const char *const *files, const int64_t *sizes,
                     const char *const *case_dirs, int threads) {
    auto result = std::make_unique<sbr_result>();
    result->taken.assign(size_t(n), 0);
    constexpr int64_t BLOCK = 16; // files per unit of work (a part)
    int64_t blocks = (n + BLOCK - 1) / BLOCK;
    result->parts.resize(static_cast<size_t>(blocks));
    std::atomic<int64_t> next{0};
    auto work = [&] {
        simdjson::dom::parser parsers[2];
        std::vector<char> buf;
        for (int64_t b; (b = next.fetch_add(1)) < blocks;) {
            for (int64_t i = b * BLOCK; i < std::min(n, (b + 1) * BLOCK); i++) {
                Job job{files[i], case_dirs[i], sizes[i]};
                result->taken[size_t(i)] = read_file(job, parsers, buf, result->parts[size_t(b)]);
            }
            shrink(result->parts[size_t(b)]);
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::max(1, threads); t++)
        pool.emplace_back(work);
    work();
    for (auto &t : pool)
        t.join();
    return result.release();
}

void sbr_free(sbr_result *r) {
    delete r;
}

const uint8_t *sbr_taken(const sbr_result *r) {
    return r->taken.data();
}

int64_t sbr_rows(const sbr_result *r) {
    int64_t n = 0;
    for (const Part &p : r->parts)
        n += p.rows;
    return n;
}

int sbr_any_rank_wall(const sbr_result *r) {
    for (const Part &p : r->parts)
        if (p.any_rank_wall)
            return 1;
    return 0;
}

int64_t sbr_entries(const sbr_result *r) {
    size_t n = 0;
    for (const Part &p : r->parts)
        n += p.entry_row.size();
    return int64_t(n);
}

int64_t sbr_values_count(const sbr_result *r) {
    size_t n = 0;
    for (const Part &p : r->parts)
        n += p.hw_value.size();
    return int64_t(n);
}

// Column `slot` of every row (slot >= N_SLOTS: counter stat slot - N_SLOTS of every entry) into
// tags[] and vals[] (sbr_rows or sbr_entries long); once per column.
void sbr_column(sbr_result *r, int slot, uint8_t *tags, int64_t *vals) {
    // Every eighth column, the freed blocks of the parts go back to the system (Python's arrays do
    // not reuse them); trimming a large heap takes ~30 ms, so not after every column.
    if (++r->exported % 8 == 0)
        malloc_trim(0);
    if (slot < N_SLOTS)
        export_column(
            r->parts, [&](Part &p) -> Column & { return p.col[slot]; },
            [&](Part &p) -> Strings & { return p.str[slot]; }, r->strings[slot], tags, vals);
    else
        export_column(
            r->parts, [&](Part &p) -> Column & { return p.entry_stat[slot - N_SLOTS]; },
            [&](Part &p) -> Strings & { return p.entry_stat_str[slot - N_SLOTS]; },
            r->strings[slot], tags, vals);
}

// Counter entries: their record's row, metric name (sbr_strings -1), whether they have per-hwthread
// values and how many (sbr_entries long each).
void sbr_entry_arrays(sbr_result *r, int64_t *row, int32_t *name, uint8_t *has_values,
                      int64_t *length) {
    size_t at = 0;
    int64_t rows = 0;
    for (Part &p : r->parts) {
        for (size_t i = 0; i < p.entry_row.size(); i++, at++) {
            row[at] = p.entry_row[i] + rows;
            name[at] = r->metric_names.add(p.metric_names.text[size_t(p.entry_name[i])]);
            has_values[at] = p.entry_has_values[i];
            length[at] = p.entry_len[i];
        }
        rows += p.rows;
    }
}

// The per-hwthread values of all entries, in order (sbr_values_count long).
void sbr_hw_values(sbr_result *r, int32_t *thread, double *value) {
    size_t at = 0;
    for (Part &p : r->parts) {
        std::copy(p.hw_thread.begin(), p.hw_thread.end(), thread + at);
        std::copy(p.hw_value.begin(), p.hw_value.end(), value + at);
        at += p.hw_value.size();
        std::vector<int32_t>().swap(p.hw_thread);
        std::vector<double>().swap(p.hw_value);
    }
    malloc_trim(0);
}

// The distinct strings of an exported column (-1: metric names), joined, with count+1 offsets.
int64_t sbr_strings(sbr_result *r, int slot, const char **joined, const int64_t **offsets) {
    const Strings &s = slot < 0 ? r->metric_names : r->strings[slot];
    r->flat.clear();
    r->offsets.assign(1, 0);
    for (const auto &t : s.text) {
        r->flat += t;
        r->offsets.push_back(int64_t(r->flat.size()));
    }
    *joined = r->flat.data();
    *offsets = r->offsets.data();
    return int64_t(s.text.size());
}
}
