// One record (a line of records.jsonl, parsed by simdjson's DOM) into the reader's cells, exactly
// as analysis/records/decode.py and analysis/records/flatten.py read it, or Refused.
#include "record_cells.h"

#include <algorithm>
#include <bitset>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace sbnative {

namespace {
enum Field : int;
}

struct FieldInfo {
    Field field;
    int slot; // the cell of a copied field
    int bit;  // for "given twice"
};

namespace {

int64_t bits(double d) {
    int64_t i;
    std::memcpy(&i, &d, sizeof i);
    return i;
}

// A JSON-text column's value: written out unless it equals the previous line's.
void json_cell(Cells &c, const Cells *prev, int slot, element v) {
    int k = slot - FIRST_JSON;
    c.json[k] = v;
    c.given[k] = true;
    c.same[k] = prev && prev->given[k] && equal(prev->json[k], prev->strings[k], v, c.strings[k]);
    if (!c.same[k]) {
        c.text[slot].clear();
        write_json(v, c.text[slot]);
        c.strings[k] = strings_span(v);
    }
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

// A JSON scalar as a cell (kind, 8 bytes, text); objects, arrays and integers beyond int64 are
// refused.
void scalar(element e, uint8_t &tag, int64_t &val, std::string &text) {
    switch (e.type()) {
    case element_type::NULL_VALUE:
        tag = T_NULL;
        return;
    case element_type::BOOL:
        tag = bool(e) ? T_TRUE : T_FALSE;
        return;
    case element_type::INT64:
        tag = T_INT;
        val = int64_t(e);
        return;
    case element_type::DOUBLE:
        tag = T_DBL;
        val = bits(double(e));
        return;
    case element_type::STRING:
        tag = T_STR;
        text.assign(std::string_view(e));
        return;
    default:
        throw Refused{};
    }
}

void scalar(Cells &c, int slot, element e) {
    scalar(e, c.tag[slot], c.val[slot], c.text[slot]);
}

// The field `key` of `parent` as a cell (null when absent or when `parent` is not an object).
void scalar_in(element parent, std::string_view key, uint8_t &tag, int64_t &val,
               std::string &text) {
    element e;
    if (parent.type() == element_type::OBJECT && find(object(parent), key, e))
        scalar(e, tag, val, text);
    else
        tag = T_NULL;
}

void scalar_in(Cells &c, int slot, element parent, std::string_view key) {
    scalar_in(parent, key, c.tag[slot], c.val[slot], c.text[slot]);
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

bool unmeasured(std::string_view s) { // what likwid prints where it measured nothing
    return s == "-" || s == "nan" || s == "NaN" || s == "-nan" || s == "null";
}

void read_metric(std::string_view name, element metric, Entries &entries) {
    if (metric.type() != element_type::OBJECT)
        throw Refused{};
    Entry &entry = entries.add();
    entry.name = name;
    // The statistics and per_hwthread in one pass over the metric's fields (as find() would take
    // each: a name given twice is refused), not one pass per name.
    static const std::string_view names[N_STATS + 1] = {"sum", "min", "max", "avg", "per_hwthread"};
    element found[N_STATS + 1];
    bool given[N_STATS + 1] = {};
    for (auto field : object(metric)) {
        for (int k = 0; k <= N_STATS; k++) {
            if (field.key == names[k]) {
                if (given[k])
                    throw Refused{};
                given[k] = true;
                found[k] = field.value;
                break;
            }
        }
    }
    for (int s = 0; s < N_STATS; s++) {
        if (given[s])
            scalar(found[s], entry.tag[s], entry.val[s], entry.text[s]);
        else
            entry.tag[s] = T_NULL;
    }
    element values = found[N_STATS];
    if (given[N_STATS] && values.type() != element_type::NULL_VALUE) {
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
    F_RESULT,
};

// Fields seen in one record, one bit each (more than 64 fields: a bitset, never a shift past 63).
using Seen = std::bitset<256>;

const std::unordered_map<std::string_view, FieldInfo> &fields() {
    static const std::unordered_map<std::string_view, FieldInfo> table = [] {
        std::unordered_map<std::string_view, FieldInfo> t;
        int bit = 0;
        auto add = [&](std::string_view name, Field f, int slot) {
            if (bit >= int(Seen().size()))
                throw std::logic_error("record_cells: more fields than Seen has bits");
            t[name] = {f, slot, bit++};
        };
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
        add("result", F_RESULT, S_RESULT);
        // every other plain field of sbcore/record_fields.py: copied as it is into its slot (the
        // ones above with a field kind of their own are checked while they are copied)
#define SB_PLAIN_FIELD(key, slot)                                                                  \
    if (!t.contains(#key))                                                                         \
        add(#key, F_OTHER_SCALAR, slot);
#include "record_plain_fields.h"
#undef SB_PLAIN_FIELD
        return t;
    }();
    return table;
}

// The field named `key`, the `position`-th of its record (nullptr: one the analysis does not read),
// noted in `c`. A runner writes its fields in one order: the name at this position in the previous
// record (`prev`, whose parsed line is still there) is compared first, the table searched only when
// it differs.
const FieldInfo *field_at(size_t position, std::string_view key, Cells &c, const Cells *prev) {
    const FieldInfo *info;
    if (prev && position < prev->keys.size() && prev->keys[position] == key) {
        info = prev->fields[position];
    } else {
        const auto &table = fields();
        auto it = table.find(key);
        info = it == table.end() ? nullptr : &it->second;
    }
    c.keys.push_back(key);
    c.fields.push_back(info);
    return info;
}

const Seen REQUIRED{(1ull << 12) - 1}; // schema .. status: the first twelve bits

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
    static const int extremes[5][2] = {{S_PROBE_INT_MUL_MIN_S, S_PROBE_INT_MUL_MAX_S},
                                       {S_PROBE_FP_LAT_MIN_S, S_PROBE_FP_LAT_MAX_S},
                                       {S_PROBE_FP_TPUT_MIN_S, S_PROBE_FP_TPUT_MAX_S},
                                       {S_PROBE_INT_ALU_MIN_S, S_PROBE_INT_ALU_MAX_S},
                                       {S_PROBE_XFER_MIN_S, S_PROBE_XFER_MAX_S}};
    static const char *chains[5] = {"int_mul", "fp_lat", "fp_tput", "int_alu", "xfer"};
    // The chains after the first three may be null or absent (OPTIONAL_CHAINS of
    // analysis/records/machine_state.py): the ALU block in records of kernels before it, the
    // cache-line transfer wherever no pair was timed.
    constexpr int TIMED_ALWAYS = 3;
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
        for (int k = 0; k < 5; k++) {
            element t;
            const bool found = find(object(own), chains[k], t);
            if (k >= TIMED_ALWAYS && (!found || t.type() == element_type::NULL_VALUE))
                continue;
            if (!found || !is_number(t))
                throw Refused{};
            set_double(c, extremes[k][m], number(t));
        }
    }
    scalar_in(c, S_PROBE_RUNQ_WAIT_S, probe, "runq_wait_s");
    // The runner's count where it keeps the per-CPU times in probes.jsonl; else from the arrays.
    element counted;
    if (find(object(probe), "n_cpus", counted) && counted.type() != element_type::NULL_VALUE) {
        set_int(c, S_PROBE_CPUS, int_at_least(counted, 1));
        return;
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
}

} // namespace

void read_record(element rec, std::string_view case_dir, Cells &c, const Cells *prev,
                 Entries &entries, bool &rank_wall) {
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
    Seen seen;
    size_t position = 0;
    c.keys.clear();
    c.fields.clear();
    for (auto field : object(rec)) {
        const FieldInfo *known = field_at(position++, field.key, c, prev);
        if (!known)
            continue; // a field the analysis does not read
        const FieldInfo &info = *known;
        if (seen.test(info.bit))
            throw Refused{};
        seen.set(info.bit);
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
        case F_RESULT:
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
    // The higher clock reading around the compute region, else clock_ghz
    // (analysis/records/flatten.py).
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
            size_t first = entries.size;
            for (auto field : object(metrics)) {
                for (size_t k = first; k < entries.size; k++)
                    if (entries.items[k].name == field.key)
                        throw Refused{}; // a metric twice
                read_metric(field.key, field.value, entries);
            }
            bool ok = c.tag[S_COUNTERS_STATUS] == T_STR && c.text[S_COUNTERS_STATUS] == "ok";
            if (!ok) // read for their checks only: no rows of the counters table
                entries.size = first;
        }
    }
}

} // namespace sbnative
