// Reads the records.jsonl files of a campaign into columns, in C++ with simdjson, for the
// analysis's loader (analysis/records/native_reader.py holds the Python side and the column rules).
//
// It is a fast path, never a judge: a file is either taken whole, exactly as
// analysis/records/decode.py and analysis/records/flatten.py would read it, or refused, and the
// loader then reads the refused files with the Python path, which names every problem. So anything
// out of the ordinary refuses the file: a truncated or blank line, invalid JSON, a record the
// schema rejects, a field of an unexpected shape, a repetition twice, a case_id that is not its
// directory's.
//
// Values keep their JSON kind (tag) so that Python can type each column as pandas would have typed
// the decoded values. simdjson's DOM parser validates the whole line (UTF-8, structure, every
// number), as msgspec does, so a refusal never depends on which fields are read.
#include "on_threads.h"
#include "record_cells.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

using namespace sbnative;

namespace {

struct Job {
    std::string path;
    std::string case_dir;
    int64_t size; // bytes to read (-1: all)
};

// A file's first `size` bytes (-1: all) read into a buffer reused from file to file, with
// simdjson's padding after them. Mapping each file instead costs more: the page tables of every
// mapping are built and torn down again, and its unmapping interrupts the other CPUs (measured side
// by side on a million records: 17.9-18.5 CPU-s mapped, 16.2-16.6 read).
struct Read {
    const char *data = nullptr;
    size_t len = 0;
    Read(const Job &job, std::vector<char> &buffer) {
        // No link followed, no FIFO waited on: only a regular file is read
        // (sbcore/campaign_access.py).
        int fd = open(job.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            return;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
            (job.size < 0 || job.size <= st.st_size)) {
            size_t want = job.size < 0 ? size_t(st.st_size) : size_t(job.size);
            if (buffer.size() < want + simdjson::SIMDJSON_PADDING)
                buffer.resize(want + simdjson::SIMDJSON_PADDING);
            size_t got = 0;
            while (got < want) {
                ssize_t n = pread(fd, buffer.data() + got, want - got, off_t(got));
                if (n <= 0)
                    break;
                got += size_t(n);
            }
            if (got == want) {
                data = buffer.data();
                len = want;
            }
        }
        close(fd);
    }
};

// One file into its rows; false (and nothing added) when the file is refused.
bool read_file(const Job &job, simdjson::dom::parser (&parsers)[2], Part &part) {
    static thread_local std::vector<char> whole;
    Read file(job, whole);
    const char *data = file.data;
    size_t len = file.len;
    if (!data)
        return false;
    if (len == 0 || data[len - 1] != '\n')
        return false; // empty, or a last line without its newline
    // Cells and entries are reused from file to file (their strings keep their buffers).
    static thread_local std::vector<Cells> rows;
    static thread_local std::vector<Entries> entries;
    size_t used = 0;
    bool rank_wall = false;
    std::vector<int64_t> reps;
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
            element rec;
            // two parsers in turn: the previous line's values stay readable for json_cell
            if (parsers[used & 1].parse(text.data(), text.size(), false).get(rec))
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
            reps.push_back(cells.val[S_REP]);
            cells.tag[S_RECORD_LINE] = T_INT;
            cells.val[S_RECORD_LINE] = line;
            start = end + 1;
        }
    } catch (const Refused &) {
        return false;
    } catch (const simdjson::simdjson_error &) {
        return false;
    }
    std::sort(reps.begin(), reps.end());
    if (std::adjacent_find(reps.begin(), reps.end()) != reps.end())
        return false; // a repetition twice
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

// One column of every part, in order, into `tags` and `vals` (strings renumbered into `global`;
// with `as_double`, numbers as doubles' bits and null as NaN's), freeing the parts' copies as it
// goes.
template <class Pick, class PickStrings>
void export_column(std::vector<Part> &parts, Pick column_of, PickStrings strings_of,
                   Strings &global, uint8_t *tags, int64_t *vals, bool as_double) {
    static const int64_t nan_bits = [] {
        double nan = std::nan("");
        int64_t b;
        std::memcpy(&b, &nan, sizeof b);
        return b;
    }();
    size_t at = 0;
    for (Part &p : parts) {
        Column &c = column_of(p);
        Strings &local = strings_of(p);
        size_t n = c.tag.size();
        std::memcpy(tags + at, c.tag.data(), n);
        if (as_double) {
            for (size_t i = 0; i < n; i++) {
                uint8_t t = c.tag[i];
                double d = double(c.val[i]);
                int64_t v = c.val[i];
                if (t == T_INT)
                    std::memcpy(&v, &d, sizeof v);
                else if (t == T_NULL)
                    v = nan_bits;
                vals[at + i] = v;
            }
        } else if (local.text.empty()) { // no text in this part: the values as they are
            std::memcpy(vals + at, c.val.data(), n * sizeof(int64_t));
        } else {
            std::vector<int32_t> renumber(local.text.size());
            for (size_t k = 0; k < renumber.size(); k++)
                renumber[k] = global.add(local.text[k]);
            for (size_t i = 0; i < n; i++)
                vals[at + i] = c.tag[i] == T_STR ? renumber[size_t(c.val[i])] : c.val[i];
        }
        at += n;
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

// C interface (ctypes). The reader's result: parts of 16 files each in file order, exported a
// column at a time into arrays Python allocates (no merged copy of a million rows is held beside
// the parts). Two threads may export two different columns at once: a column's cells, strings and
// joined text are its own; only the count of exported columns is shared.
struct sbr_result {
    std::vector<Part> parts;
    std::vector<uint8_t> taken;         // per file
    Strings strings[N_SLOTS + N_STATS]; // a column's distinct strings once exported
    Strings metric_names;
    std::atomic<int> exported{0}; // columns handed out so far
    // per column (and the metric names last): its strings joined, as sbr_strings hands them out
    std::string flat[N_SLOTS + N_STATS + 1];
    std::vector<int64_t> offsets[N_SLOTS + N_STATS + 1];
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
        for (int64_t b; (b = next.fetch_add(1)) < blocks;) {
            for (int64_t i = b * BLOCK; i < std::min(n, (b + 1) * BLOCK); i++) {
                Job job{files[i], case_dirs[i], sizes[i]};
                result->taken[size_t(i)] = read_file(job, parsers, result->parts[size_t(b)]);
            }
            shrink(result->parts[size_t(b)]);
        }
    };
    on_threads(threads, work);
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

// The kinds of value column `slot` holds (as sbr_column numbers them): bit k set for tag k.
int sbr_kinds(const sbr_result *r, int slot) {
    int kinds = 0;
    for (const Part &p : r->parts) {
        const Column &c = slot < N_SLOTS ? p.col[slot] : p.entry_stat[slot - N_SLOTS];
        bool seen[256] = {};
        for (uint8_t t : c.tag)
            seen[t] = true;
        for (int t = 0; t < 256; t++)
            if (seen[t])
                kinds |= 1 << (t & 31);
    }
    return kinds;
}

// Column `slot` of every row (slot >= N_SLOTS: counter stat slot - N_SLOTS of every entry) into
// tags[] and vals[] (sbr_rows or sbr_entries long), with `as_double` (a column of numbers and
// nulls) its values as doubles; once per column.
void sbr_column(sbr_result *r, int slot, uint8_t *tags, int64_t *vals, int as_double) {
    // Every eighth column, the freed blocks of the parts go back to the system (Python's arrays do
    // not reuse them); trimming a large heap takes ~30 ms, so not after every column.
    if (++r->exported % 8 == 0)
        malloc_trim(0);
    if (slot < N_SLOTS)
        export_column(
            r->parts, [&](Part &p) -> Column & { return p.col[slot]; },
            [&](Part &p) -> Strings & { return p.str[slot]; }, r->strings[slot], tags, vals,
            as_double != 0);
    else
        export_column(
            r->parts, [&](Part &p) -> Column & { return p.entry_stat[slot - N_SLOTS]; },
            [&](Part &p) -> Strings & { return p.entry_stat_str[slot - N_SLOTS]; },
            r->strings[slot], tags, vals, as_double != 0);
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
    std::string &flat = r->flat[slot < 0 ? N_SLOTS + N_STATS : slot];
    std::vector<int64_t> &ends = r->offsets[slot < 0 ? N_SLOTS + N_STATS : slot];
    flat.clear();
    ends.assign(1, 0);
    for (const auto &t : s.text) {
        flat += t;
        ends.push_back(int64_t(flat.size()));
    }
    *joined = flat.data();
    *offsets = ends.data();
    return int64_t(s.text.size());
}
}
