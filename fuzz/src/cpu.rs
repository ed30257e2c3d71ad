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

    // The test harness runs other tests on other threads of this process
    // meanwhile, so only what both clocks share is asserted: each reads
    // back-to-back with the other, so over the same span they agree to
    // /proc's clock ticks (10 ms, two readings) and the few microseconds
    // between the reads.
    #[test]
    fn both_clocks_see_the_same_cpu_time() {
        let pid = std::process::id();
        let (start, start_proc) = (process_cpu_s(), child_cpu_s(pid).unwrap());
        let mut x = 0u64;
        for i in 0..300_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let (end, end_proc) = (process_cpu_s(), child_cpu_s(pid).unwrap());
        let (worked, worked_proc) = (end - start, end_proc - start_proc);
        assert!(worked > 0.05, "{worked} {x}");
        assert!(
            (worked - worked_proc).abs() < 0.05,
            "{worked} against {worked_proc}"
        );
        assert_eq!(child_cpu_s(u32::MAX), None);
    }
}
