use hookpoint::extensible;

pub struct Agent {
    pub name: String,
}

#[extensible]
impl Agent {
    pub fn name(&self) -> &str {
        &self.name
    }
}

fn main() {}
