//! An experiment file written from parts: a test names what it is about
//! (its variants, workloads, bench settings) and takes the rest as every
//! test here does (`make` in `src/`, a `baseline` variant, two quick
//! wall-time repetitions).
//!
//! The file is laid out as one would write it by hand, in the order of the
//! calls: `[target]` (name, source, build, binaries, compiler, then its
//! other lines, so `build` is always line 5; a cargo target's `cargo` in
//! place of build and binaries), services, variants,
//! workloads, `[params]`, `[bench]`.

/// A whole experiment; `render` gives its TOML.
#[derive(Clone, Debug)]
pub struct Experiment {
    name: String,
    build: String,
    binaries: Vec<(String, String)>,
    /// A cargo target's `cargo = { … }`, in place of build and binaries.
    cargo: Option<String>,
    target: Vec<String>,
    services: Vec<Service>,
    variants: Vec<Variant>,
    workloads: Vec<Workload>,
    params: Vec<String>,
    bench: Bench,
}

impl Experiment {
    /// `[target] name`, built by `make` in `src/` into the binary `name`,
    /// with a `baseline` variant and the default [`Bench`].
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            build: "make".to_owned(),
            binaries: vec![(name.to_owned(), name.to_owned())],
            cargo: None,
            target: Vec::new(),
            services: Vec::new(),
            variants: vec![Variant::new("baseline")],
            workloads: Vec::new(),
            params: Vec::new(),
            bench: Bench::QUICK,
        }
    }

    /// The build command (`make` by default).
    pub fn build(mut self, command: &str) -> Self {
        command.clone_into(&mut self.build);
        self
    }

    /// The binaries, as `(name, path)`, in place of the one named after the
    /// target.
    pub fn binaries(mut self, binaries: &[(&str, &str)]) -> Self {
        self.binaries = binaries
            .iter()
            .map(|(name, path)| ((*name).to_owned(), (*path).to_owned()))
            .collect();
        self
    }

    /// A cargo target: `cargo = TABLE` (`{ bins = ["app"] }`) in place of
    /// `build` and `binaries`.
    pub fn cargo(mut self, table: &str) -> Self {
        self.cargo = Some(table.to_owned());
        self
    }

    /// The target's compiler.
    pub fn compiler(self, compiler: &str) -> Self {
        self.target_line(&format!("compiler = {}", quote(compiler)))
    }

    /// Another line of `[target]`, as written.
    pub fn target_line(mut self, line: &str) -> Self {
        self.target.push(line.to_owned());
        self
    }

    /// Add `service`, or put it in the place of the one of its name.
    pub fn service(mut self, service: Service) -> Self {
        match self.services.iter_mut().find(|s| s.name == service.name) {
            Some(same) => *same = service,
            None => self.services.push(service),
        }
        self
    }

    /// These services, started in this order, and no others.
    pub fn services(mut self, services: impl IntoIterator<Item = Service>) -> Self {
        self.services = services.into_iter().collect();
        self
    }

    /// Add `variant`, or put it in the place of the one of its name.
    pub fn variant(mut self, variant: Variant) -> Self {
        match self.variants.iter_mut().find(|v| v.name == variant.name) {
            Some(same) => *same = variant,
            None => self.variants.push(variant),
        }
        self
    }

    /// These variants and no others (no `baseline` unless among them).
    pub fn variants(mut self, variants: impl IntoIterator<Item = Variant>) -> Self {
        self.variants = variants.into_iter().collect();
        self
    }

    /// Add `workload`, or put it in the place of the one of its name.
    pub fn workload(mut self, workload: Workload) -> Self {
        match self.workloads.iter_mut().find(|w| w.name == workload.name) {
            Some(same) => *same = workload,
            None => self.workloads.push(workload),
        }
        self
    }

    /// A line of `[params]`, e.g. `n = 1`.
    pub fn param(mut self, line: &str) -> Self {
        self.params.push(line.to_owned());
        self
    }

    /// The `[bench]` settings.
    pub fn bench(mut self, bench: Bench) -> Self {
        self.bench = bench;
        self
    }

    /// The experiment as TOML.
    pub fn render(&self) -> String {
        let binaries: Vec<String> = self
            .binaries
            .iter()
            .map(|(name, path)| format!("{name} = {}", quote(path)))
            .collect();
        let mut target = vec![
            "[target]".to_owned(),
            format!("name = {}", quote(&self.name)),
            r#"source = { path = "src" }"#.to_owned(),
        ];
        match &self.cargo {
            Some(table) => target.push(format!("cargo = {table}")),
            None => target.extend([
                format!("build = {}", quote(&self.build)),
                format!("binaries = {{ {} }}", binaries.join(", ")),
            ]),
        }
        target.extend(self.target.iter().cloned());
        let mut blocks = vec![target.join("\n")];
        blocks.extend(self.services.iter().map(Service::render));
        blocks.extend(self.variants.iter().map(Variant::render));
        blocks.extend(self.workloads.iter().map(Workload::render));
        if !self.params.is_empty() {
            blocks.push(format!("[params]\n{}", self.params.join("\n")));
        }
        blocks.push(self.bench.render());
        format!("\n{}\n", blocks.join("\n\n"))
    }
}

/// A `[[variant]]`: its name, then its lines in the order given.
#[derive(Clone, Debug)]
pub struct Variant {
    name: String,
    lines: Vec<String>,
}

impl Variant {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            lines: Vec::new(),
        }
    }

    /// `optimize = [words]`.
    pub fn optimize(self, words: &[&str]) -> Self {
        self.line(&format!("optimize = {}", list(words)))
    }

    pub fn compiler(self, compiler: &str) -> Self {
        self.line(&format!("compiler = {}", quote(compiler)))
    }

    pub fn cflags(self, cflags: &str) -> Self {
        self.line(&format!("cflags = {}", quote(cflags)))
    }

    /// `params = { … }`, the inline table's body as written (`us = 200`).
    pub fn params(self, table: &str) -> Self {
        self.line(&format!("params = {{ {table} }}"))
    }

    /// Any other line, as written.
    pub fn line(mut self, line: &str) -> Self {
        self.lines.push(line.to_owned());
        self
    }

    fn render(&self) -> String {
        let mut lines = vec![
            "[[variant]]".to_owned(),
            format!("name = {}", quote(&self.name)),
        ];
        lines.extend(self.lines.iter().cloned());
        lines.join("\n")
    }
}

/// A `[[workload]]`: its name, its lines in the order given, then its
/// `[workload.load]` if it has one.
#[derive(Clone, Debug)]
pub struct Workload {
    name: String,
    lines: Vec<String>,
    load: Vec<String>,
}

impl Workload {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            lines: Vec::new(),
            load: Vec::new(),
        }
    }

    /// `run = command`.
    pub fn run(self, command: &str) -> Self {
        self.line(&format!("run = {}", quote(command)))
    }

    /// `train_run = command`.
    pub fn train_run(self, command: &str) -> Self {
        self.line(&format!("train_run = {}", quote(command)))
    }

    /// `role = "train"`, `"bench"` or `"both"`.
    pub fn role(self, role: &str) -> Self {
        self.line(&format!("role = {}", quote(role)))
    }

    /// `figures = [{ name = "checksum", regex = "checksum ([0-9]+)" }]`:
    /// the checksum the fixtures print, to show a variant computes the same.
    pub fn checksum(self) -> Self {
        self.line(r#"figures = [{ name = "checksum", regex = "checksum ([0-9]+)" }]"#)
    }

    /// `[workload.load]` with these lines, as written (one a line).
    pub fn load(mut self, lines: &str) -> Self {
        self.load = lines
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        self
    }

    /// Any other line, as written.
    pub fn line(mut self, line: &str) -> Self {
        self.lines.push(line.to_owned());
        self
    }

    fn render(&self) -> String {
        let mut lines = vec![
            "[[workload]]".to_owned(),
            format!("name = {}", quote(&self.name)),
        ];
        lines.extend(self.lines.iter().cloned());
        if !self.load.is_empty() {
            lines.push("[workload.load]".to_owned());
            lines.extend(self.load.iter().cloned());
        }
        lines.join("\n")
    }
}

/// A `[[target.service]]`: name, start, readiness, then other lines.
#[derive(Clone, Debug)]
pub struct Service {
    name: String,
    lines: Vec<String>,
}

impl Service {
    pub fn new(name: &str, start: &str) -> Self {
        Self {
            name: name.to_owned(),
            lines: vec![format!("start = {}", quote(start))],
        }
    }

    /// `ready = check` (`"http:/"`, `"log:…"`, …).
    pub fn ready(self, check: &str) -> Self {
        self.line(&format!("ready = {}", quote(check)))
    }

    /// Any other line, as written.
    pub fn line(mut self, line: &str) -> Self {
        self.lines.push(line.to_owned());
        self
    }

    fn render(&self) -> String {
        format!(
            "[[target.service]]\nname = {}\n{}",
            quote(&self.name),
            self.lines.join("\n")
        )
    }
}

/// `[bench]`; the default is two timed runs of wall time, no warmup.
#[derive(Clone, Copy, Debug)]
pub struct Bench {
    pub repetitions: u32,
    pub warmup: u32,
    /// Left out of the file when empty.
    pub metrics: &'static [&'static str],
    pub instruction_repetitions: Option<u32>,
    /// Other lines, as written (e.g. `primary = "instructions"`).
    pub lines: &'static str,
    pub seed: Option<u64>,
}

impl Default for Bench {
    fn default() -> Self {
        Self::QUICK
    }
}

impl Bench {
    /// The default, for `Bench { repetitions: 6, ..Bench::QUICK }` in a
    /// `const`.
    pub const QUICK: Self = Self {
        repetitions: 2,
        warmup: 0,
        metrics: &["wall"],
        instruction_repetitions: None,
        lines: "",
        seed: None,
    };

    fn render(&self) -> String {
        let mut lines = vec![
            "[bench]".to_owned(),
            format!("repetitions = {}", self.repetitions),
            format!("warmup = {}", self.warmup),
        ];
        if !self.metrics.is_empty() {
            lines.push(format!("metrics = {}", list(self.metrics)));
        }
        if let Some(n) = self.instruction_repetitions {
            lines.push(format!("instruction_repetitions = {n}"));
        }
        lines.extend(
            self.lines
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
        if let Some(seed) = self.seed {
            lines.push(format!("seed = {seed}"));
        }
        lines.join("\n")
    }
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A TOML array of strings.
fn list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
    format!("[{}]", quoted.join(", "))
}
