#include "tools/interrupt.h"

#include <csignal>

namespace ts {
namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

extern "C" void on_signal(int sig) {
  if (!g_signal) g_signal = sig;
  std::signal(sig, SIG_DFL);  // the next one is not waited for
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a backend blocked in read() or poll() carries on with its case
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int InterruptGuard::signal() const { return g_signal; }

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

}  // namespace ts
