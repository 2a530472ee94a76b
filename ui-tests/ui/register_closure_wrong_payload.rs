use hookpoint::{ScopeBuilder, point};

point! {
    pub static GREETING: SyncPoint<String> = "greeting";
}

fn main() {
    let scope = ScopeBuilder::new("s").build().unwrap();
    let _guard = scope
        .register(&GREETING)
        .name("count")
        .run(|n: &mut u64| *n += 1);
}
