//! The CPU time the process has used, which is what the campaign judges an
//! input's time by: a worker runs one input at a time on one thread (a
//! plan's threads excepted, whose time is taken apart), so the CPU its
//! input took is about the wall time it would take on an idle machine,
//! while a loaded machine (other builds, the other workers) stretches the
//! wall time three- or fourfold (docs/reliability.md).

/// Seconds of CPU this process has used in all its threads (NaN if the
/// clock cannot be read).
pub fn process_cpu_s() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec`, which we own, and
    // reads nothing else.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if status != 0 {
        return f64::NAN;
    }
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

/// Seconds of CPU process `pid` has used (user and system, from
/// `/proc/PID/stat`, in clock ticks); `None` when it cannot be read (the
/// process is gone, or not Linux).
pub fn child_cpu_s(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold
    // spaces: state is the first, utime the 12th and stime the 13th.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: `sysconf` reads a configuration value and touches no memory.
    let per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_s > 0).then(|| ticks as f64 / per_s as f64)
}

#[cfg(test)]
mod tests {
    use super::{child_cpu_s, process_cpu_s};

    // One test, so that no other test's thread spends this process's CPU
    // while it sleeps.
    #[test]
    fn work_uses_cpu_time_and_sleep_does_not() {
        let (start, start_proc) = (process_cpu_s(), child_cpu_s(std::process::id()).unwrap());
        let mut x = 0u64;
        for i in 0..300_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let worked = process_cpu_s() - start;
        // /proc counts in clock ticks of 10 ms: the loop takes more.
        let worked_proc = child_cpu_s(std::process::id()).unwrap() - start_proc;
        assert!(
            worked > 0.05 && worked_proc > 0.0,
            "{worked} {worked_proc} {x}"
        );
        let before_sleep = process_cpu_s();
        std::thread::sleep(std::time::Duration::from_millis(300));
        // A sleep of 300 ms costs (almost) no CPU.
        assert!(process_cpu_s() - before_sleep < 0.1);
        assert_eq!(child_cpu_s(u32::MAX), None);
    }
}
