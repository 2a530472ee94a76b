use hookpoint::extension;

#[extension(point = "greeting")]
fn greet<T: Default>(value: &mut T) {
    *value = T::default();
}

fn main() {}
