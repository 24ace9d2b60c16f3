//! The CPUs this process may use and pinning the calling thread to one (sched_getaffinity,
//! sched_setaffinity): what the clock probes and the benchmarks' threads run on.

/// The CPUs this process may run on (sched_getaffinity), in ascending order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size matches the set passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        return (0..n).collect();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: c is below CPU_SETSIZE, the set's capacity.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    restrict_current_thread(&[cpu])
}

/// Lets the calling thread (and the threads it starts from now on) run on `cpus` only.
pub fn restrict_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    restrict_thread(0, cpus)
}

/// Lets the thread `tid` of this process (0: the calling thread) run on `cpus` only; a thread
/// that has ended gives ESRCH.
pub fn restrict_thread(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    for &cpu in cpus {
        // SAFETY: cpu is below CPU_SETSIZE, the set's capacity.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: tid is a thread id (0: the calling thread); the size matches the set passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
