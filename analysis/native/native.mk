# The analysis's compiled parts, one library loaded by analysis/records/native_library.py through ctypes:
# the reader of records.jsonl files (records_reader.cpp: files and the C interface; record_cells.cpp:
# one record into cells; json_text.cpp; simdjson; case_listing.cpp: the case directories).
# Without it the analysis reads records in Python, slower.
NATIVE_LIB := build/lib/libsb_native.so
NATIVE_SOURCES := $(addprefix analysis/native/,records_reader.cpp record_cells.cpp json_text.cpp case_listing.cpp)
NATIVE_CXXFLAGS := -std=c++20 -O2 -fPIC -Wall -Wextra
# The record's plain fields, generated from their one declaration (sbcore/record_fields.py).
NATIVE_GEN := build/gen/record_plain_fields.h

native: $(NATIVE_LIB)

$(NATIVE_GEN): sbcore/record_fields.py analysis/records/fields.py analysis/records/native_fields.py analysis/records/machine_state.py
	@mkdir -p $(@D)
	$(PY) -m analysis.records.native_fields > $@.tmp
	mv $@.tmp $@

$(NATIVE_LIB): $(NATIVE_SOURCES) $(wildcard analysis/native/*.h) $(NATIVE_GEN) analysis/native/native.mk
	@mkdir -p $(@D)
	$(CXX) $(NATIVE_CXXFLAGS) -I$(dir $(NATIVE_GEN)) -shared -o $@.tmp $(NATIVE_SOURCES) -lsimdjson
	mv $@.tmp $@
