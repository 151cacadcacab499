# The libFuzzer targets in fuzz/ (<name>.fuzz.cpp, seed corpus fuzz/corpus/<name>/), shared by
# fuzz/CMakeLists.txt (the libFuzzer builds) and tests/CMakeLists.txt (the corpus replay).
set(TAPEFLOW_FUZZ_TARGETS
    tfrecord_reader example_parser checkpoint_index saved_model_parse event_file idx_reader
    image_decode checkpoint_state object_graph tf_config)
# Targets that link tapeflow::keras_io (libhdf5, libzip): built and replayed only where it is.
set(TAPEFLOW_FUZZ_KERAS_IO_TARGETS keras_weights)
