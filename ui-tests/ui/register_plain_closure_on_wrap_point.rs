use hookpoint::{ScopeBuilder, point};

point! {
    pub static MODEL_CALL: WrapPoint<String, String> = "model.call";
}

fn main() {
    let scope = ScopeBuilder::new("s").build().unwrap();
    let _guard = scope
        .register(&MODEL_CALL)
        .name("plain")
        .run(|req: &mut String| req.push('!'));
}
