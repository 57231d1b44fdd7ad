//! The pass commands hand their result back as soon as their work is done, not once the
//! kernel has taken their memory back. A process's exit unmaps its pages before its parent
//! learns that it ended: 6-10 ms of a 90 ms `annotate` at 100k nodes, 40-60 ms at 1M, on the
//! VMs we measure on. So the process forks at start (small then, so the fork is cheap): the
//! child does the work and, once its output is written and flushed, lets go of its standard
//! streams, sends its exit code to the parent and exits; the parent, which waited on a pipe,
//! exits with that code at once, while the child's memory is given back in the background.
//! The mold linker does the same.
//!
//! Linux with glibc only; elsewhere, when the pipe or the fork is refused, or when
//! `ONNX_BCAST_NO_FORK` is set (to any value; for debuggers and tracers, which follow the
//! parent), the work runs in the one process as before.

/// Keeps the file `path` names now (if any) alive until this process ends. A save replaces
/// it by renaming its output over it, and the kernel frees the replaced file's blocks inside
/// that rename, while the caller waits: 0.2 ms for the 0.7 MB output of a 10k-node chain,
/// 1.4 ms for 7 MB, 12 ms for the 77 MB of a million nodes (timed on this VM's ext4). Held
/// open, the old file is freed when the descriptor closes at the exit, which in a detached
/// worker no one waits for. Opened with `O_PATH`: no read access needed, and a FIFO or a
/// device there is neither blocked on nor opened; `O_NOFOLLOW`, since the rename replaces a
/// symbolic link, not what it points to.
#[cfg(target_os = "linux")]
pub fn hold_replaced(path: &std::path::Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let held = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH | libc::O_NOFOLLOW).open(path);
    // Not closed: the process ends after the save.
    std::mem::forget(held);
}

#[cfg(not(target_os = "linux"))]
pub fn hold_replaced(_path: &std::path::Path) {}

/// The working child's end of the pipe to its parent.
pub struct Detached {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tx: libc::c_int,
}

/// Forks. Returns in the child, which does the work and ends with [`Detached::finish`]; the
/// parent never returns: it exits with the code the child sends, or with the child's own exit
/// status when none came (2 when a signal ended it). `None` when the work should run here.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn detach() -> Option<Detached> {
    if std::env::var_os("ONNX_BCAST_NO_FORK").is_some() {
        return None;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    let [rx, tx] = fds;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the process has one thread here (called before any is started), so the child
    // starts in a consistent state and may allocate.
    match unsafe { libc::fork() } {
        -1 => {
            // SAFETY: both descriptors came from pipe2 above and are closed once.
            unsafe {
                libc::close(rx);
                libc::close(tx);
            }
            None
        }
        0 => {
            // SAFETY: closing this process's copy of the read end; asking to be killed when
            // the parent dies (a signal sent to the pid the caller knows ends the work too),
            // checked against a parent that died before the request.
            unsafe {
                libc::close(rx);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(i32::from(super::FAILED));
                }
            }
            Some(Detached { tx })
        }
        child => {
            // SAFETY: the parent's copy of the write end, closed once, so that the read below
            // sees the end of the pipe when the child ends.
            unsafe { libc::close(tx) };
            wait_for(child, rx)
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn detach() -> Option<Detached> {
    None
}

/// The parent's side: the code the child sends, else its exit status.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn wait_for(child: libc::pid_t, rx: libc::c_int) -> ! {
    let mut code = 0u8;
    loop {
        // SAFETY: reads at most one byte into `code`.
        let n = unsafe { libc::read(rx, (&raw mut code).cast(), 1) };
        if n == 1 {
            // SAFETY: the parent holds nothing to flush or clean up (it printed nothing).
            unsafe { libc::_exit(i32::from(code)) };
        }
        if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut status = 0;
    // SAFETY: waits for this process's own child and writes its status into `status`.
    while unsafe { libc::waitpid(child, &mut status, 0) } == -1 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            eprintln!("onnx-bcast: lost track of the worker process");
            // SAFETY: as above.
            unsafe { libc::_exit(i32::from(super::FAILED)) };
        }
    }
    if libc::WIFEXITED(status) {
        // SAFETY: as above.
        unsafe { libc::_exit(libc::WEXITSTATUS(status)) };
    }
    if libc::WTERMSIG(status) == libc::SIGPIPE {
        // Its output was cut short by the reader: end as it did, quietly.
        // SAFETY: the default action of SIGPIPE, which `main` set before the fork, ends this
        // process.
        unsafe { libc::raise(libc::SIGPIPE) };
    }
    eprintln!("onnx-bcast: the worker process was ended by signal {}", libc::WTERMSIG(status));
    // SAFETY: as above.
    unsafe { libc::_exit(i32::from(super::FAILED)) }
}

impl Detached {
    /// Ends the working child: its output flushed, its standard streams let go (so that
    /// whoever reads its pipes sees their end now), `code` sent to the parent, then the exit,
    /// whose unmapping no one waits for.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    pub fn finish(self, code: u8) -> ! {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: plain descriptor calls on this process's own descriptors; after them nothing
        // writes to the standard streams, and `_exit` skips the handlers that would.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            for fd in 0..3 {
                if null >= 0 {
                    libc::dup2(null, fd);
                } else {
                    libc::close(fd);
                }
            }
            libc::write(self.tx, (&raw const code).cast(), 1);
            libc::_exit(i32::from(code))
        }
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    pub fn finish(self, code: u8) -> ! {
        std::process::exit(i32::from(code))
    }
}
