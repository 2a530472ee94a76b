//! Compiling modules off the reload path. A module the caches do not have is compiled on a
//! thread of its own (a few at once per scope); the load that asked waits for it up to a bound
//! (`ScopeBuilder::wasm_compile_wait`) and then goes on without it, so a module that takes long to
//! compile (tens of thousands of functions) holds no reload: the other files' changes apply, the
//! file's last good version keeps running, and when the compile ends the scope is reloaded again
//! (the wake-up), which finds the module compiled.
//!
//! A compile cannot be cut short: one whose module nobody asks for any more runs to its end and
//! its result is dropped; modules waiting their turn that nobody asks for are dropped unstarted.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use wasmtime::Module;

use super::engine::Host;
use crate::locks;

/// A module's content hash (SHA-256 of its binary form).
pub(crate) type Digest = [u8; 32];

/// What the scope does when a compile nobody waited for ends: reload (with a weak reference to
/// the scope, so a dropped scope is not kept alive).
pub(crate) type Wake = Arc<dyn Fn() + Send + Sync>;

/// A compiled module: whether it was written to the disk cache, or read from it.
pub(crate) struct Compiled {
    pub(crate) module: Module,
    pub(crate) written: bool,
    pub(crate) from_disk: bool,
}

/// One scope's compiles.
pub(crate) struct Compiler {
    shared: Arc<Shared>,
}

struct Shared {
    jobs: Mutex<Jobs>,
    done: Condvar,
}

#[derive(Default)]
struct Jobs {
    /// Each module asked for: queued, compiling or compiled.
    by_digest: HashMap<Digest, Job>,
    /// Modules waiting for a compile thread, first asked first.
    queue: VecDeque<Work>,
    /// Compile threads running.
    threads: usize,
    /// Of those, the ones compiling a module no file wants any more (it cannot be cancelled):
    /// they do not count toward the cap, so superseded versions of a big module never keep the
    /// other modules waiting.
    stale: usize,
    /// Loads waiting for each module right now (no wake-up is needed for those).
    waiting: HashMap<Digest, usize>,
    wake: Option<Wake>,
    /// A wake-up is scheduled and has not started its reload yet.
    wake_pending: bool,
    /// The scope is gone: nothing more is started.
    closed: bool,
}

enum Job {
    Queued { since: Instant },
    Compiling { since: Instant },
    Done(Result<Compiled, String>),
}

/// A module to compile, and the disk cache entry to write.
struct Work {
    digest: Digest,
    bytes: Vec<u8>,
    disk: Option<PathBuf>,
}

/// Where a module is, when a load asks for it.
pub(crate) enum Progress {
    /// Compiled (or refused by the compiler) now.
    Done(Result<Compiled, String>),
    /// Still compiling (or waiting its turn) since then.
    Pending { since: Instant },
}

/// Threads still compiling superseded modules beyond which no compile starts until one ends.
const MAX_STALE: usize = 8;

/// Compile threads one scope runs at once (besides stale ones).
fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4))
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            shared: Arc::new(Shared {
                jobs: Mutex::new(Jobs::default()),
                done: Condvar::new(),
            }),
        }
    }
}

impl Drop for Compiler {
    fn drop(&mut self) {
        let mut jobs = locks::lock(&self.shared.jobs);
        jobs.closed = true;
        jobs.queue.clear();
        jobs.wake = None;
    }
}

impl Compiler {
    /// What to call when a compile nobody waits for ends.
    pub(crate) fn set_wake(&self, wake: Option<Wake>) {
        locks::lock(&self.shared.jobs).wake = wake;
    }

    /// The module `bytes` (whose SHA-256 is `digest`), compiled, or still compiling: a module not
    /// asked for yet is handed to a compile thread and waited for until `until` (a module asked
    /// for by an earlier load is not waited for again). `disk` is the cache entry to write.
    pub(crate) fn module(
        &self,
        host: &'static Host,
        digest: Digest,
        bytes: &[u8],
        disk: Option<PathBuf>,
        until: Instant,
    ) -> Progress {
        let mut jobs = locks::lock(&self.shared.jobs);
        if let std::collections::hash_map::Entry::Vacant(slot) = jobs.by_digest.entry(digest) {
            slot.insert(Job::Queued {
                since: Instant::now(),
            });
            jobs.queue.push_back(Work {
                digest,
                bytes: bytes.to_vec(),
                disk,
            });
            if let Err(why) = self.start_thread(&mut jobs, host) {
                jobs.by_digest.remove(&digest);
                jobs.queue.retain(|w| w.digest != digest);
                return Progress::Done(Err(why));
            }
            jobs = self.wait(jobs, digest, until);
        }
        match jobs.by_digest.remove(&digest) {
            Some(Job::Done(result)) => Progress::Done(result),
            Some(pending @ (Job::Queued { since } | Job::Compiling { since })) => {
                jobs.by_digest.insert(digest, pending);
                Progress::Pending { since }
            }
            None => Progress::Done(Err("its compile was dropped; it is compiled again".into())),
        }
    }

    /// Starts a compile thread for the queue, unless enough run.
    fn start_thread(&self, jobs: &mut Jobs, host: &'static Host) -> Result<(), String> {
        // Stale threads end on their own; a bound keeps a burst of saves from piling them up.
        if jobs.threads - jobs.stale >= max_threads() || jobs.stale >= MAX_STALE {
            return Ok(());
        }
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("hookpoint-wasm-compile".into())
            .spawn(move || compile_queued(&shared, host))
            .map_err(|e| format!("cannot start a compile thread: {e}"))?;
        jobs.threads += 1;
        Ok(())
    }

    /// Waits until module `digest` is compiled or `until` passed.
    fn wait<'g>(
        &self,
        mut jobs: std::sync::MutexGuard<'g, Jobs>,
        digest: Digest,
        until: Instant,
    ) -> std::sync::MutexGuard<'g, Jobs> {
        *jobs.waiting.entry(digest).or_default() += 1;
        while matches!(
            jobs.by_digest.get(&digest),
            Some(Job::Queued { .. } | Job::Compiling { .. })
        ) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            jobs = self
                .shared
                .done
                .wait_timeout(jobs, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        if let Some(n) = jobs.waiting.get_mut(&digest) {
            *n -= 1;
            if *n == 0 {
                jobs.waiting.remove(&digest);
            }
        }
        jobs
    }

    /// The module `digest` if a compile thread has it, done or not (a finished one is handed
    /// over once).
    pub(crate) fn finished(&self, digest: &Digest) -> Option<Progress> {
        let mut jobs = locks::lock(&self.shared.jobs);
        match jobs.by_digest.remove(digest)? {
            Job::Done(result) => Some(Progress::Done(result)),
            pending @ (Job::Queued { since } | Job::Compiling { since }) => {
                jobs.by_digest.insert(*digest, pending);
                Some(Progress::Pending { since })
            }
        }
    }

    /// Forgets the modules not in `wanted`: unstarted ones are not compiled, finished ones are
    /// dropped, a running one's result will be.
    pub(crate) fn retain(&self, wanted: &std::collections::HashSet<Digest>) {
        let mut jobs = locks::lock(&self.shared.jobs);
        let mut stale = 0;
        jobs.by_digest.retain(|d, job| {
            let keep = wanted.contains(d);
            if !keep && matches!(job, Job::Compiling { .. }) {
                stale += 1;
            }
            keep
        });
        jobs.stale += stale;
        jobs.queue.retain(|w| wanted.contains(&w.digest));
    }
}

/// A compile thread: compiles queued modules until none is left.
fn compile_queued(shared: &Arc<Shared>, host: &'static Host) {
    loop {
        let work = {
            let mut jobs = locks::lock(&shared.jobs);
            match jobs.queue.pop_front().filter(|_| !jobs.closed) {
                Some(work) => {
                    if let Some(job) = jobs.by_digest.get_mut(&work.digest) {
                        let since = match job {
                            Job::Queued { since } => *since,
                            _ => Instant::now(),
                        };
                        *job = Job::Compiling { since };
                    }
                    work
                }
                None => {
                    jobs.threads -= 1;
                    return;
                }
            }
        };
        let result = compile(host, &work);
        let mut jobs = locks::lock(&shared.jobs);
        let wanted = matches!(
            jobs.by_digest.get(&work.digest),
            Some(Job::Compiling { .. })
        );
        if !wanted {
            // Counted stale when `retain` dropped it (or the scope is gone).
            jobs.stale = jobs.stale.saturating_sub(1);
            continue;
        }
        if jobs.closed {
            continue;
        }
        jobs.by_digest.insert(work.digest, Job::Done(result));
        shared.done.notify_all();
        if !jobs.waiting.contains_key(&work.digest)
            && !jobs.wake_pending
            && let Some(wake) = jobs.wake.clone()
        {
            jobs.wake_pending = true;
            let shared = shared.clone();
            let spawned = std::thread::Builder::new()
                .name("hookpoint-wasm-ready".into())
                .spawn(move || {
                    locks::lock(&shared.jobs).wake_pending = false;
                    wake();
                });
            if spawned.is_err() {
                // The next reload (any file event, or `Scope::reload`) finds the module.
                jobs.wake_pending = false;
            }
        }
    }
}

/// Compiles one queued module and writes it to the disk cache.
fn compile(host: &Host, work: &Work) -> Result<Compiled, String> {
    compile_now(host, &work.bytes, work.disk.as_deref())
}

/// Compiles `bytes` on this thread and writes the module to the disk entry `disk`, if any.
pub(crate) fn compile_now(
    host: &Host,
    bytes: &[u8],
    disk: Option<&std::path::Path>,
) -> Result<Compiled, String> {
    let started = Instant::now();
    let module =
        Module::new(&host.engine, bytes).map_err(|e| format!("does not compile: {e:#}"))?;
    tracing::debug!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        bytes = bytes.len(),
        "wasm module compiled"
    );
    let written = disk.is_some_and(|file| super::entry::write(file, &module));
    Ok(Compiled {
        module,
        written,
        from_disk: false,
    })
}
