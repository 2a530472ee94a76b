//! The process-wide Wasmtime engine: one configuration (epoch interruption, a pooling instance
//! allocator, copy-on-write memory images), the linker of the host functions, and the epoch
//! ticker that turns a runaway guest into a timeout.
//!
//! One engine per process is what Wasmtime recommends: compiled modules belong to an engine, the
//! pooling allocator's slots and the ticker thread are shared by every scope.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, Linker, PoolingAllocationConfig};

use super::host::{self, HostState};

/// How often the epoch advances while a call is in flight. A call's budget is counted in ticks,
/// so a timeout fires between one and two ticks after the budget.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// Instances alive at once across the process (pooling allocator slots): calls in flight plus
/// instances kept by guests that keep state. Past it, a call fails with an error.
const POOL_SLOTS: u32 = 512;

/// The engine, its linker and its ticker.
pub(crate) struct Host {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<HostState>,
    ticker: Ticker,
}

static HOST: OnceLock<Result<Host, String>> = OnceLock::new();

/// The process's host, created on first use.
///
/// # Errors
/// Why the engine could not be created (it is tried once; the error then stays).
pub(crate) fn host() -> Result<&'static Host, &'static str> {
    HOST.get_or_init(Host::new).as_ref().map_err(String::as_str)
}

impl Host {
    fn new() -> Result<Host, String> {
        let engine = match Engine::new(&config(true)) {
            Ok(engine) => engine,
            Err(e) => {
                // Reserving the pool's address space can fail (a `ulimit -v`, say): instances
                // are then allocated on demand, a little slower per call.
                tracing::warn!(error = %e, "wasm: no pooling allocator; allocating instances on demand");
                Engine::new(&config(false))
                    .map_err(|e| format!("cannot create the wasm engine: {e}"))?
            }
        };
        let linker =
            host::linker(&engine).map_err(|e| format!("cannot link the host functions: {e}"))?;
        let ticker = Ticker::spawn(engine.clone())?;
        Ok(Host {
            engine,
            linker,
            ticker,
        })
    }

    /// Marks a call in flight until the guard drops; the ticker runs only while one is.
    pub(crate) fn in_flight(&self) -> InFlight<'_> {
        self.ticker.enter()
    }
}

/// The engine's configuration: epoch interruption for time budgets, and (when `pooling`) a pool
/// of pre-reserved instance slots so a call's fresh instance costs no `mmap`.
fn config(pooling: bool) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    // A guest's own stack (deep recursion traps instead of growing without bound).
    config.max_wasm_stack(512 * 1024);
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_core_instances(POOL_SLOTS)
            .total_memories(POOL_SLOTS)
            .total_tables(POOL_SLOTS)
            .max_memory_size(super::MAX_MEMORY_MB as usize * 1024 * 1024)
            // A slot's first MiB is reset with `memset` and stays mapped, the rest is given back
            // with `madvise`: a small guest's fresh instance then takes no page fault and no
            // TLB shoot-down.
            .linear_memory_keep_resident(1024 * 1024)
            .table_keep_resident(64 * 1024);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        // Data segments are copied into a fresh instance rather than mapped copy-on-write: for
        // the small modules extensions are, a copy of a few KiB costs less than the page faults
        // and unmapping of a mapping per call (measured: 8 µs → 4 µs a call, `benches/wasm.rs`).
        config.memory_init_cow(false);
    }
    config
}

/// The thread that advances the engine's epoch every [`TICK`] while calls are in flight, and
/// sleeps (parked) otherwise.
struct Ticker {
    in_flight: Arc<AtomicUsize>,
    thread: Thread,
}

impl Ticker {
    fn spawn(engine: Engine) -> Result<Ticker, String> {
        let in_flight = Arc::new(AtomicUsize::new(0));
        let count = in_flight.clone();
        let handle = std::thread::Builder::new()
            .name("hookpoint-wasm-epoch".into())
            .spawn(move || {
                loop {
                    if count.load(Ordering::Acquire) == 0 {
                        // Woken by the call that makes the count non-zero (an unpark before the
                        // park is kept as a token, so no wake-up is lost).
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            })
            .map_err(|e| format!("cannot start the wasm epoch thread: {e}"))?;
        Ok(Ticker {
            in_flight,
            thread: handle.thread().clone(),
        })
    }

    fn enter(&self) -> InFlight<'_> {
        if self.in_flight.fetch_add(1, Ordering::AcqRel) == 0 {
            self.thread.unpark();
        }
        InFlight(self)
    }
}

/// A call in flight (see [`Host::in_flight`]).
pub(crate) struct InFlight<'a>(&'a Ticker);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Ticks a budget lasts: rounded up, plus one for the tick in progress.
pub(crate) fn ticks(budget: Duration) -> u64 {
    let tick = TICK.as_nanos();
    u64::try_from(budget.as_nanos().div_ceil(tick)).unwrap_or(u64::MAX / 2) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_lasts_its_ticks_rounded_up_plus_the_tick_in_progress() {
        assert_eq!(ticks(Duration::from_millis(1)), 2);
        assert_eq!(ticks(Duration::from_micros(1500)), 3);
        assert_eq!(ticks(Duration::from_secs(1)), 1001);
        assert_eq!(ticks(Duration::MAX), u64::MAX / 2 + 1);
    }
}
