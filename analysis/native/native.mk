# The analysis's compiled reader of records.jsonl files (records_reader.cpp; loaded by
# analysis/native_records.py through ctypes). Without it the analysis reads records in Python, slower.
NATIVE_LIB := build/lib/libsb_records.so
NATIVE_CXXFLAGS := -std=c++20 -O2 -fPIC -Wall -Wextra

native: $(NATIVE_LIB)

$(NATIVE_LIB): analysis/native/records_reader.cpp analysis/native/native.mk
	@mkdir -p $(@D)
	$(CXX) $(NATIVE_CXXFLAGS) -shared -o $@.tmp $< -lsimdjson
	mv $@.tmp $@
