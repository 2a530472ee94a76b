use hookpoint::extensible;

pub struct Agent {
    pub name: String,
}

#[extensible]
impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

fn main() {}
