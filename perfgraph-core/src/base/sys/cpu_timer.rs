//! A thread's CPU-time timer: `timer_create` on `CLOCK_THREAD_CPUTIME_ID`, signalling that thread alone
//! (`SIGEV_THREAD_ID`) each time it has run a period on a CPU. Causal profiling's: it makes a thread in a
//! long stretch without a perfgraph call pay its delays. Linux only (elsewhere none starts).

/// A running CPU-time timer of the thread that started it, deleted by [`CpuTimer::delete`].
#[derive(Debug, Clone, Copy)]
pub struct CpuTimer(libc::timer_t);

impl CpuTimer {
    /// A timer on the calling thread's CPU clock that sends `signal` to that thread every `period_ns` of
    /// its CPU time; `None` if the system refuses one (no timers left, not Linux).
    pub fn start(signal: libc::c_int, period_ns: u64) -> Option<CpuTimer> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: an all-zero sigevent is valid storage; the fields set are the ones SIGEV_THREAD_ID
            // reads.
            let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = signal;
            event.sigev_notify_thread_id = super::thread_id() as libc::c_int;
            let mut timer: libc::timer_t = std::ptr::null_mut();
            // SAFETY: `event` is a fully set sigevent and `timer` valid for the id written into it.
            if unsafe { libc::timer_create(libc::CLOCK_THREAD_CPUTIME_ID, &mut event, &mut timer) }
                != 0
            {
                return None;
            }
            let period = libc::timespec {
                tv_sec: (period_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (period_ns % 1_000_000_000) as libc::c_long,
            };
            let spec = libc::itimerspec {
                it_interval: period,
                it_value: period,
            };
            // SAFETY: `timer` was just created; `spec` is a valid itimerspec; a null old value is allowed.
            if unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) } != 0 {
                // SAFETY: `timer` was created above and is deleted once.
                unsafe { libc::timer_delete(timer) };
                return None;
            }
            Some(CpuTimer(timer))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (signal, period_ns);
            None
        }
    }
}

impl CpuTimer {
    /// Deletes the timer (one started by this process; in a forked child, which inherits none, the call
    /// fails harmlessly).
    pub fn delete(self) {
        // SAFETY: `timer_delete` on an id that is not (or no longer) a timer of this process fails with
        // EINVAL; it has no other precondition.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// Installs `handler` for `sig` with `SA_RESTART` (an interrupted read or write resumes rather than fail
/// with EINTR in the program), only if `sig`'s disposition is its default: a program's own handler is never
/// replaced. Returns whether it was installed.
pub fn catch_unclaimed(sig: libc::c_int, handler: super::SignalHandler) -> bool {
    super::disposition(sig, handler) == super::Disposition::Default
        && super::catch_signal(sig, handler)
}

/// The calling thread's `errno`, to put back after a signal handler's own calls ([`set_errno`]).
/// Async-signal-safe.
#[cfg(target_os = "linux")]
pub fn errno() -> libc::c_int {
    // SAFETY: `__errno_location` returns the calling thread's errno, valid while it lives.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's `errno`. Async-signal-safe.
#[cfg(target_os = "linux")]
pub fn set_errno(value: libc::c_int) {
    // SAFETY: as in `errno`.
    unsafe { *libc::__errno_location() = value };
}
