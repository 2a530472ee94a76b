//! Tracing output of dispatch: a span per dispatch (point, depth), an event per extension with
//! duration and outcome, the `on_error = "log"` warning, and the cancellation event.

use std::io::Write;
use std::sync::{Arc, Mutex};

use hookpoint::{extension, point};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn capture<R>(f: impl FnOnce() -> R) -> (R, String) {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let r = tracing::subscriber::with_default(subscriber, f);
    (r, out.text())
}

point! {
    pub static OBSERVED: SyncPoint<Vec<&'static str>> = "obs_observed";
    pub static SLOW: AsyncPoint<u32> = "obs_slow";
}

#[extension(point = OBSERVED, order = 1)]
fn obs_ok(v: &mut Vec<&'static str>) {
    v.push("ok");
}

#[extension(point = OBSERVED, order = 2, on_error = "log")]
fn obs_fails(_: &mut Vec<&'static str>) -> Result<(), hookpoint::Error> {
    Err(hookpoint::Error::msg("disk full"))
}

#[extension(point = OBSERVED, order = 3)]
fn obs_after(v: &mut Vec<&'static str>) {
    v.push("after");
}

#[extension(point = SLOW, order = 1)]
async fn obs_never_ready(_: &mut u32) {
    std::future::pending::<()>().await;
}

#[test]
fn dispatch_emits_a_span_and_an_event_per_extension_with_duration_and_outcome() {
    let (v, log) = capture(|| {
        let mut v = Vec::new();
        OBSERVED.call(&mut v).unwrap();
        v
    });
    assert_eq!(v, ["ok", "after"]);
    assert!(log.contains("hookpoint.dispatch"), "{log}");
    assert!(log.contains("point=\"obs_observed\""), "{log}");
    assert!(log.contains("extension=\"obs_ok\""), "{log}");
    assert!(log.contains("duration_us="), "{log}");
    assert!(log.contains("outcome=\"ok\""), "{log}");
    assert!(log.contains("outcome=\"error\""), "{log}");
    assert!(
        log.contains("on_error = log") && log.contains("disk full"),
        "{log}"
    );
}

#[test]
fn a_dropped_async_dispatch_is_visible_in_tracing() {
    let ((), log) = capture(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut n = 0u32;
            let r =
                tokio::time::timeout(std::time::Duration::from_millis(20), SLOW.call(&mut n)).await;
            assert!(r.is_err(), "the dispatch should have timed out");
        });
    });
    assert!(log.contains("dropped before it finished"), "{log}");
    assert!(log.contains("obs_slow"), "{log}");
}
