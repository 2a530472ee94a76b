//! A by-name dispatch of a point nothing knows runs nothing and returns `Ok`; since a misspelt
//! name does the same, the first call of each such name warns with the nearest known point.

use std::sync::{Arc, Mutex};

use hookpoint::extension;

hookpoint::point! {
    /// Declared, with no extension anywhere.
    pub static QUIET_ONE: SyncPoint<u32> = "unknown_hint.quiet_one";
    pub static QUIET_TWO: SyncPoint<u32> = "unknown_hint.quiet_two";
}

#[extension(point = "unknown_hint.greeting")]
fn greet(text: &mut String) {
    text.push_str("hello");
}

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `f` logs at `warn` and above.
fn warnings_of(f: impl FnOnce()) -> String {
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    String::from_utf8_lossy(&buf.0.lock().unwrap()).into_owned()
}

#[test]
fn a_misspelt_name_warns_once_with_the_nearest_point() {
    let mut text = String::new();
    hookpoint::call_sync("unknown_hint.greeting", &mut text).unwrap();
    assert_eq!(text, "hello");
    let log = warnings_of(|| {
        for _ in 0..3 {
            let outcome = hookpoint::call_sync("unknown_hint.greting", &mut text).unwrap();
            assert!(!outcome.is_stopped());
        }
    });
    assert_eq!(log.matches("did you mean").count(), 1, "{log}");
    assert!(
        log.contains("`unknown_hint.greting`") && log.contains("`unknown_hint.greeting`"),
        "{log}"
    );
    assert_eq!(text, "hello", "nothing ran for the misspelt name");
}

#[test]
fn a_name_close_to_nothing_does_not_warn() {
    let log = warnings_of(|| {
        hookpoint::call_sync("an.entirely.new.point.of.the.app", &mut 0u32).unwrap();
    });
    assert!(log.is_empty(), "{log}");
}

#[test]
fn an_async_call_warns_too() {
    let log = warnings_of(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(hookpoint::call_async(
            "unknown_hint.greetinx",
            &mut String::new(),
        ))
        .unwrap();
    });
    assert!(
        log.contains("did you mean `unknown_hint.greeting`"),
        "{log}"
    );
}

#[test]
fn a_misspelt_call_site_warns_once_with_the_nearest_point() {
    let mut text = String::new();
    hookpoint::call!("unknown_hint.greeting", &mut text).unwrap();
    assert_eq!(text, "hello");
    let log = warnings_of(|| {
        for _ in 0..3 {
            hookpoint::call!("unknown_hint.greetingg", &mut text).unwrap();
        }
    });
    assert_eq!(log.matches("did you mean").count(), 1, "{log}");
    assert!(
        log.contains("`unknown_hint.greetingg`") && log.contains("`unknown_hint.greeting`"),
        "{log}"
    );
    assert_eq!(text, "hello", "nothing ran for the misspelt name");
}

#[test]
fn a_call_site_of_a_known_point_does_not_warn() {
    let log = warnings_of(|| {
        let mut text = String::new();
        hookpoint::call!("unknown_hint.greeting", &mut text).unwrap();
        assert_eq!(text, "hello");
    });
    assert!(log.is_empty(), "{log}");
}

#[test]
fn a_declared_point_with_no_extension_is_known() {
    let log = warnings_of(|| {
        QUIET_TWO.call(&mut 0).unwrap();
        QUIET_ONE.call(&mut 0).unwrap();
        hookpoint::call_sync("unknown_hint.quiet_one", &mut 0u32).unwrap();
        hookpoint::call!("unknown_hint.quiet_two", &mut 0u32).unwrap();
    });
    assert!(log.is_empty(), "{log}");
}

#[test]
fn a_misspelt_declared_point_with_no_extension_is_suggested() {
    let log = warnings_of(|| {
        hookpoint::call_sync("unknown_hint.quiet_onee", &mut 0u32).unwrap();
    });
    assert!(
        log.contains("did you mean `unknown_hint.quiet_one`"),
        "{log}"
    );
}
