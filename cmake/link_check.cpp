// The program of the ts_link_check_* targets (CMakeLists.txt): one layer's library linked whole, so
// that the link fails if the layer calls into one above it.
int main() { return 0; }
