use hookpoint::{Error, Next, ScopeBuilder, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

fn main() {
    let scope = ScopeBuilder::new("s").build().unwrap();
    let _guard = scope
        .register(&MODEL_CALL)
        .name("count")
        .wrap(|n: &mut u64, mut next: Next<'_, u64, u64>| -> Result<u64, Error> { next.run(n) });
}
