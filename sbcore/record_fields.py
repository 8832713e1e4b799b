"""The fields of a stored record, declared once: their JSON type, who writes them, where they are stored
(once per process or per repetition), whether a line without them counts, and how the analysis reads them.

Everything else that names the record's fields is derived from this table or checked against it:
- the rule of which record lines count, shared by status, resume, run-case and analyze
  (sbcore/record_lines.py: RECORD_FIELDS is the required fields of this table);
- the analysis's JSON Schema of a counted line and its typed decoder (analysis/records/fields.py,
  analysis/records/decode.py), and the columns copied as they are (RAW_TEXT, RAW_NUMERIC);
- the kernels' schema, kernels/record.schema.json, which holds the kernel-written fields' detailed
  constraints (enums, patterns, nested shapes): tests/analysis/test_record_fields.py checks that it
  declares exactly the kernel fields here, with the same JSON type, and requires what the rule requires;
  it also fails when a list of record fields is written anywhere else in the record-handling code;
- where the runner stores it (its level, PROCESS or REP: sbcore/record_rows.py builds the facts line,
  its long tables and the reps.csv columns from it; docs/formats.md lists them, checked by the same
  test).

Adding a field is one line here (with its level) plus the code that writes it (a kernel,
jobs/runcase.py) and the code that uses it (docs/architecture.md has a worked example). Pure Python,
no imports of the project.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = "scalebench.run/1"  # of a record as a kernel prints it and as a reader gives it back
STORE_SCHEMA = "scalebench.run/2"  # of a case's stored records (sbcore/record_store.py: facts + rows)

# JSON types of a field (its value may also be null where the kernel schema allows it).
STRING, INTEGER, NUMBER, BOOLEAN, OBJECT, ARRAY = "string", "integer", "number", "boolean", "object", "array"
# Who writes it: the kernel binary (and build/bin/program-run), or the runner (jobs/runcase.py).
KERNEL, RUNNER = "kernel", "runner"
# Where a stored record keeps it (sbcore/record_store.py, docs/formats.md), decided by where it is set:
# PROCESS: equal on every record of one kernel process (the runner's per-invocation fields, the case's
# parameters, the build, the host): one line of facts.jsonl per process, its writer checks they are equal;
# REP: may differ between the repetitions of one process: a column of reps.csv, its repetition's row (an
# object or array stored flat as its `parts` declare, below).
PROCESS, REP = "process", "rep"
# How the analysis reads it (analysis/records/derive.py, the reference; stored_frame.py, the columnar path):
COLUMN = "column"  # copied as it is into a column of its own name (text or number)
VALUE = "value"  # its columns derived from its value (of a REP field: from its stored columns at once)
REPEATING = "repeating"  # repeats over a case's repetitions: its columns derived once per distinct value
UNREAD = "unread"  # not in the records table (`why` says who reads it)
FROM_PARAMS = "from params"  # `absent`: a record without it takes the case's params' value


@dataclass(frozen=True)
class Part:
    """How a REP field of type object or array (or a part of one) is stored flat (sbcore/record_rows.py):
    - a scalar type: one typed column of reps.csv, '<parent>_<name>' (or of its array's table);
    - OBJECT with `parts`: its keys, in the order writers give them, each a column or parts of its own;
    - OBJECT with `table` and no parts: keys set by the data (the kernel's `result`), one row per key
      in the long table `table` (key, integer, number, text columns), their count in '<path>_n';
    - ARRAY with `table`: its length in '<path>_n' (reps.csv), item i a row of the long table `table`
      keyed by (process, rep, index): one unnamed scalar part is a scalar item, named parts an item's
      fixed positions; an ARRAY without parts stores only empty arrays flat.
    A value the declaration does not fit (an undeclared key, another type, a null object) is kept
    whole in reps.csv's extra_json.

    A PROCESS field of type object declares only what leaves its facts line (sbcore/record_rows.py):
    its parts of type OBJECT with `table` and `key`, objects keyed by data, each key a row of the long
    table facts.<table>.csv beside facts.jsonl, keyed by (process, the index of each enclosing item,
    index: the key's place in its object). `key` names the column of the key and its type (INTEGER: a
    key that is an integer's decimal text). The row's other columns are the value: one unnamed scalar
    part is a scalar value in the column `value`; named parts are an object value's keys in their
    order: a scalar a column of its name, an object keyed by data its count '<name>_n' (its keys in a
    table of its own). In the facts line the object is replaced, at its place, by '<name>_n'; the
    field's other keys stay there as they are. A value the declaration does not fit stays whole in
    the facts line."""

    name: str
    type: str
    parts: tuple[Part, ...] = ()
    table: str = ""
    key: Part | None = None


def P(name: str, type_: str, *parts: Part, table: str = "", key: Part | None = None) -> Part:  # noqa: N802
    return Part(name, type_, tuple(parts), table, key)


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    by: str
    level: str  # PROCESS or REP: where the stored records keep it (sbcore/record_store.py)
    read: str
    required: bool = False  # a line without it (or with a value breaking the bounds below) does not count
    const: object = None
    minimum: float | None = None
    exclusive: bool = False  # minimum is exclusive
    absent: object = None  # the value the analysis takes when the field is absent
    why: str = ""  # UNREAD: where it is used instead
    flat: Part | None = None  # how reps.csv (REP) or facts.jsonl (PROCESS) and their long tables store it

    @property
    def shape(self) -> Part:
        return self.flat or Part(self.name, self.type)

    @property
    def python_types(self) -> tuple[type, ...]:
        """What json.loads gives for a value of its type (bool is refused apart: it is an int)."""
        return PYTHON_TYPES[self.type]


PYTHON_TYPES = {
    STRING: (str,),
    INTEGER: (int,),
    NUMBER: (int, float),
    BOOLEAN: (bool,),
    OBJECT: (dict,),
    ARRAY: (list,),
}


_EXTREMES = tuple(P(n, NUMBER) for n in ("int_mul", "fp_lat", "fp_tput", "int_alu", "xfer"))
_STATS = tuple(P(n, NUMBER) for n in ("sum", "min", "max", "avg"))  # likwid's, over the hardware threads


def _per_hwthread(table: str) -> Part:
    """A likwid value per hardware thread: {"<hwthread>": number or null}."""
    return P("per_hwthread", OBJECT, P("", NUMBER), table=table, key=P("hwthread", INTEGER))


def _by_name(name: str, key: str, table: str) -> Part:
    """likwid's values by metric (or counter) name: each its value per hardware thread and _STATS, in
    the tables `<table>s` and `<table>_hwthreads`."""
    return P(
        name, OBJECT, _per_hwthread(f"{table}_hwthreads"), *_STATS, table=f"{table}s", key=P(key, STRING)
    )


# In the order of the records table's copied columns (text first, then numbers).
FIELDS: tuple[Field, ...] = (
    Field("schema", STRING, KERNEL, PROCESS, VALUE, required=True, const=SCHEMA),
    Field("campaign", STRING, RUNNER, PROCESS, COLUMN),
    Field("node_type", STRING, RUNNER, PROCESS, COLUMN),
    Field("hostname", STRING, RUNNER, PROCESS, COLUMN),
    Field("host", STRING, KERNEL, PROCESS, COLUMN),
    Field("kernel", STRING, KERNEL, PROCESS, COLUMN, required=True),
    Field("lang", STRING, KERNEL, PROCESS, COLUMN, required=True),
    Field("model", STRING, KERNEL, PROCESS, COLUMN, required=True),
    Field("checksum", STRING, KERNEL, REP, COLUMN, required=True),
    Field("started", STRING, KERNEL, REP, COLUMN),
    Field("inner_path", STRING, KERNEL, PROCESS, COLUMN),  # which inner loop ran, on which core design
    Field("uarch", STRING, KERNEL, PROCESS, COLUMN),
    Field(
        "duet_partner", STRING, RUNNER, PROCESS, COLUMN
    ),  # the case measured at the same time (jobs/duets.py)
    Field("pop_method", STRING, KERNEL, PROCESS, COLUMN),  # a user's program: its per-worker times' method
    Field("scaling", STRING, KERNEL, PROCESS, COLUMN),  # a user's program: weak or strong
    Field("wall_s", NUMBER, KERNEL, REP, COLUMN, required=True, minimum=0, exclusive=True),
    Field("setup_s", NUMBER, KERNEL, REP, COLUMN),
    Field("cpu_user_s", NUMBER, KERNEL, REP, COLUMN),
    Field("cpu_sys_s", NUMBER, KERNEL, REP, COLUMN),
    Field("ctx_voluntary", INTEGER, KERNEL, REP, COLUMN),
    Field("ctx_involuntary", INTEGER, KERNEL, REP, COLUMN),
    Field("os_threads", INTEGER, KERNEL, REP, COLUMN),
    Field("work", INTEGER, KERNEL, REP, COLUMN),
    Field("timer_res_s", NUMBER, KERNEL, REP, COLUMN),
    Field("runner_wall_s", NUMBER, RUNNER, PROCESS, COLUMN),
    Field("exit_status", INTEGER, RUNNER, PROCESS, COLUMN),
    Field("clock_ghz", NUMBER, KERNEL, REP, COLUMN),
    Field("invocation", INTEGER, RUNNER, PROCESS, COLUMN),
    Field("in_process_rep", INTEGER, RUNNER, REP, COLUMN),
    Field(
        "trial", INTEGER, RUNNER, PROCESS, COLUMN
    ),  # the trial of its comparison family and its place in it
    Field("trial_slot", INTEGER, RUNNER, PROCESS, COLUMN),
    Field("duet_cpu", INTEGER, RUNNER, PROCESS, COLUMN),
    # a conducted trial (jobs/conduct.py): the baseline's times on the case's CPUs just before this
    # repetition: the slowest CPU's, the CPUs' summed speed n / sum(1/t), and each CPU's (pin order)
    Field("ref_static_s", NUMBER, RUNNER, REP, COLUMN, minimum=0, exclusive=True),
    Field("ref_dynamic_s", NUMBER, RUNNER, REP, COLUMN, minimum=0, exclusive=True),
    # per-worker measurements, mean and maximum over the workers (analysis/stats/pop_metrics.py)
    Field("worker_useful_mean_s", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_useful_max_s", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_wait_mean_s", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_wait_at_useful_max_s", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_cpu_mean_s", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_work_mean", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_work_max", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_clock_ghz_mean", NUMBER, KERNEL, REP, COLUMN),
    Field("worker_clock_ghz_min", NUMBER, KERNEL, REP, COLUMN),
    # a user's program (kernels/programs/): the whole process, and what the POP metrics divide by
    Field("process_wall_s", NUMBER, KERNEL, REP, COLUMN),
    Field("pop_wall_s", NUMBER, KERNEL, REP, COLUMN),
    Field("threads", INTEGER, KERNEL, PROCESS, VALUE, required=True, minimum=1),
    Field("ranks", INTEGER, KERNEL, PROCESS, VALUE, required=True, minimum=1),
    Field("params", OBJECT, KERNEL, PROCESS, REPEATING, required=True),
    Field("rep", INTEGER, KERNEL, REP, VALUE, required=True, minimum=0),
    Field("case_id", STRING, RUNNER, PROCESS, VALUE, required=True),
    Field("status", STRING, RUNNER, PROCESS, VALUE, required=True, const="ok"),
    Field("schedule", STRING, KERNEL, PROCESS, VALUE, absent=FROM_PARAMS),
    Field("sync", STRING, KERNEL, PROCESS, VALUE, absent=FROM_PARAMS),
    Field("inner", STRING, KERNEL, PROCESS, VALUE, absent=FROM_PARAMS),
    Field("warmup", BOOLEAN, KERNEL, PROCESS, VALUE, absent=False),
    Field("case_index", INTEGER, RUNNER, PROCESS, VALUE),
    Field(
        "warmup_wall_s",
        ARRAY,
        RUNNER,
        REP,
        VALUE,
        flat=P("warmup_wall_s", ARRAY, P("", NUMBER), table="warmups"),
    ),  # the process's warm-up times, on its first record
    Field(
        "ref_cpu_s",
        ARRAY,
        RUNNER,
        REP,
        UNREAD,
        why="a conducted repetition's reference times per CPU, for a person (ref_static_s, ref_dynamic_s)",
        flat=P("ref_cpu_s", ARRAY, P("", NUMBER), table="refs"),
    ),
    Field("build", OBJECT, KERNEL, PROCESS, VALUE),
    Field(
        "rank_wall_s", ARRAY, KERNEL, REP, VALUE, flat=P("rank_wall_s", ARRAY, P("", NUMBER), table="ranks")
    ),
    Field(
        "placement",
        ARRAY,
        KERNEL,
        REP,
        REPEATING,
        flat=P("placement", ARRAY, P("start_cpu", INTEGER), P("end_cpu", INTEGER), table="threads"),
    ),
    Field(
        "pin",
        OBJECT,
        RUNNER,
        REP,
        REPEATING,
        flat=P(
            "pin",
            OBJECT,
            P("strategy", STRING),
            P("cpus", ARRAY, P("", INTEGER), table="pin_cpus"),
            P("command", ARRAY, P("", STRING), table="pin_command"),
            P("violations", ARRAY),  # a violation's details: extra_json
            P("tool", STRING),
            P("confined", ARRAY, P("", INTEGER), table="pin_cpus"),
        ),
    ),
    Field(  # likwid-perfctr's counts (jobs/counter_record.py): status, group, reason, cpus, hwthreads,
        # likwid, region_info stay in the facts line; metrics and events (name -> sum/min/max/avg and the
        # value per hardware thread; an event also per counter) in long tables beside it
        "counters",
        OBJECT,
        RUNNER,
        PROCESS,
        REPEATING,
        flat=P(
            "counters",
            OBJECT,
            _by_name("metrics", "metric", "counters_metric"),
            P(
                "events",
                OBJECT,
                _by_name("counters", "counter", "counters_event_counter"),
                _per_hwthread("counters_event_hwthreads"),
                *_STATS,
                P("counter", STRING),
                table="counters_events",
                key=P("event", STRING),
            ),
        ),
    ),
    Field("slurm", OBJECT, RUNNER, PROCESS, VALUE),
    Field(
        "clock",
        OBJECT,
        KERNEL,
        REP,
        VALUE,
        flat=P("clock", OBJECT, P("before_ghz", NUMBER), P("after_ghz", NUMBER), P("method", STRING)),
    ),
    Field(  # the machine-state probe (analysis/records/machine_state.py)
        "probe",
        OBJECT,
        KERNEL,
        REP,
        VALUE,
        flat=P(
            "probe",
            OBJECT,
            P("int_mul_iters", INTEGER),
            P("fp_lat_iters", INTEGER),
            P("fp_tput_iters", INTEGER),
            P("int_alu_iters", INTEGER),
            P("xfer_round_trips", INTEGER),
            P("runq_wait_s", NUMBER),
            P("min_s", OBJECT, *_EXTREMES),
            P("max_s", OBJECT, *_EXTREMES),
            P("n_cpus", INTEGER),
        ),
    ),
    Field("sampling", OBJECT, RUNNER, PROCESS, VALUE),
    Field(  # the scheduling scenario asked and applied, per worker
        "sched",
        OBJECT,
        KERNEL,
        REP,
        REPEATING,
        flat=P(
            "sched",
            OBJECT,
            P("nice", INTEGER),
            P("worker_nice", STRING),
            P("worker_policy", STRING),
            P("omp_wait_policy", STRING),
            P("gomp_spincount", STRING),
            P("wait_policy", STRING),
            P("wait_applied", STRING),
            P(
                "applied",
                ARRAY,
                P("policy", STRING),
                P("priority", INTEGER),
                P("nice", INTEGER),
                table="threads",
            ),
        ),
    ),
    Field("load", OBJECT, RUNNER, PROCESS, VALUE),  # the competing load and the CPU it got
    Field(  # the kernel's own statistics
        "result", OBJECT, KERNEL, REP, REPEATING, flat=P("result", OBJECT, table="results")
    ),
    Field(  # per worker a list of CPUs: only an empty one is stored flat, else in extra_json
        "placement_seen",
        ARRAY,
        KERNEL,
        REP,
        UNREAD,
        why="jobs/runcase.py checks a program's threads with it",
        flat=P("placement_seen", ARRAY),
    ),
    Field(
        "command", ARRAY, RUNNER, PROCESS, UNREAD, why="the argument vector, for a person reading the record"
    ),
    Field("stderr_tail", STRING, RUNNER, PROCESS, UNREAD, why="the end of the kernel's stderr, for a person"),
    Field(
        "lock_wait_s",
        NUMBER,
        RUNNER,
        PROCESS,
        UNREAD,
        why="the wait for the host's measuring lock, for a person",
    ),
    Field(
        "reps_per_process",
        INTEGER,
        RUNNER,
        PROCESS,
        UNREAD,
        why="the repetitions of its process, for a person",
    ),
    Field("comparison_trial", BOOLEAN, RUNNER, PROCESS, UNREAD, why="sbcore/sampling.py leaves it out"),
)
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
REQUIRED: tuple[Field, ...] = tuple(f for f in FIELDS if f.required)
PROCESS_FIELDS: tuple[Field, ...] = tuple(f for f in FIELDS if f.level == PROCESS)
REP_FIELDS: tuple[Field, ...] = tuple(f for f in FIELDS if f.level == REP)
