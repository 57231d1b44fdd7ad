//! Subcommands and their arguments.

mod bench;
mod run;
mod test;
mod verify;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use onnx_bcast::infer::{self, Options};
use onnx_bcast::rewrite::Pass;
use onnx_bcast::{io, report, Error, Result};

/// Writes to stdout. A reader that has gone (`onnx-bcast infer m.onnx | head`) is no error:
/// the rest of the output is dropped and the command ends with the code its work gives.
pub fn emit(args: std::fmt::Arguments) -> Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_fmt(args) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io { path: "<stdout>".into(), source: e }),
        _ => Ok(()),
    }
}

pub use onnx_bcast::report::count;

/// `println!` through [`emit`], returning its error from the enclosing function.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::emit(format_args!("{}\n", format_args!($($arg)*)))?
    };
}
pub(crate) use say;

/// Exit code: done, no error findings.
pub const OK: u8 = 0;
/// Exit code: models read, some error finding.
pub const FINDINGS: u8 = 1;
/// Exit code: the job could not be done.
pub const FAILED: u8 = 2;

/// What `--help` says about exit codes, on every command.
const EXIT_CODES: &str = "Exit codes:
  0  done, no error findings (warnings allowed)
  1  every model was read and at least one has an error finding (for test and verify: a case
     failed, outputs differ)
  2  the job could not be done: unreadable or malformed file, bad arguments, I/O error, a
     resource limit";

#[derive(Parser, Debug)]
#[command(
    name = "onnx-bcast",
    version,
    about = "An ONNX broadcasting pass: infer shapes, check, rewrite and run broadcasts",
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How `check` reports.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Readable text.
    Text,
    /// One JSON document.
    Json,
    /// GitHub Actions annotations (`::error file=...`).
    Github,
    /// A SARIF 2.1.0 log, for code scanning.
    Sarif,
}

/// How `infer` and `bench` report.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum PlainFormat {
    /// Readable text.
    Text,
    /// One JSON document.
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print every tensor's inferred type and shape.
    #[command(after_help = EXIT_CODES)]
    Infer {
        /// The ONNX model to read.
        model: PathBuf,
        /// How to print the result.
        #[arg(long, value_enum, default_value = "text")]
        format: PlainFormat,
        #[command(flatten)]
        shapes: Shapes,
    },
    /// Report findings only, over any number of models (directories are searched for *.onnx).
    #[command(after_help = EXIT_CODES)]
    Check {
        /// The ONNX models to check, or folders to search for *.onnx files.
        #[arg(required = true)]
        models: Vec<PathBuf>,
        /// How to print the findings.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        shapes: Shapes,
        /// Fail unless the model runs at every size of the input dim NAME in SPEC: a range
        /// `32..=2048`, a stepped range `32..=2048/32` or a list `1,2,4`.
        #[arg(long = "require", value_name = "NAME=SPEC")]
        require: Vec<String>,
        /// Count warnings as failures (exit 1).
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Write the model back with value_info for every tensor of every graph.
    #[command(after_help = EXIT_CODES)]
    Annotate {
        /// The ONNX model to read.
        model: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        shapes: Shapes,
        /// Replace declared types that contradict inference with the inferred ones (a warning
        /// each) when they are the model's only errors, instead of refusing the model.
        #[arg(long)]
        fix_declared: bool,
    },
    /// Write the model back with every implicit broadcast made explicit (Unsqueeze + Expand).
    #[command(after_help = EXIT_CODES)]
    Expand {
        /// The ONNX model to read.
        model: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        shapes: Shapes,
        /// Replace declared types that contradict inference with the inferred ones (a warning
        /// each) when they are the model's only errors, instead of refusing the model.
        #[arg(long)]
        fix_declared: bool,
    },
    /// Remove Expand/Tile nodes that implicit broadcasting makes redundant (the inverse of expand).
    #[command(after_help = EXIT_CODES)]
    Implicit {
        /// The ONNX model to read.
        model: PathBuf,
        #[command(flatten)]
        out: Output,
    },
    /// Execute the model on the built-in CPU executor; writes one .npy per graph output.
    #[command(after_help = EXIT_CODES)]
    Run {
        /// The ONNX model to run.
        model: PathBuf,
        /// A graph input and its file (.npy, or an ONNX TensorProto .pb); one for each input
        /// without an initializer.
        #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_input, num_args = 1..)]
        inputs: Vec<(String, PathBuf)>,
        /// Where to write the outputs (default: the current folder).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        #[command(flatten)]
        memory: Memory,
    },
    /// Run ONNX backend-format test case folders and compare their outputs.
    #[command(after_help = EXIT_CODES)]
    Test {
        /// Case folders (holding model.onnx and test_data_set_*), or folders of them.
        #[arg(required = true)]
        cases: Vec<PathBuf>,
        #[command(flatten)]
        memory: Memory,
    },
    /// Compare two versions of a model: input and output types and shapes, and contracts.
    #[command(after_help = EXIT_CODES)]
    Diff {
        /// The model before.
        old: PathBuf,
        /// The model after.
        new: PathBuf,
        /// How to print the findings.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Run two models on the same generated inputs and compare their outputs exactly.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// The model before the rewrite.
        original: PathBuf,
        /// The rewritten model.
        rewritten: PathBuf,
        /// Bind a symbolic dimension of the inputs to a size (NAME=VALUE); repeatable. Dims
        /// left unbound take the size 4.
        #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_dim)]
        dims: Vec<(String, i64)>,
        /// The shape of an input whose dims have no name (NAME=D0,D1,...); repeatable.
        #[arg(long = "shape", value_name = "NAME=DIMS", value_parser = parse_shape)]
        shapes: Vec<(String, Vec<i64>)>,
        #[command(flatten)]
        memory: Memory,
    },
    /// Time whole-model runs on deterministic generated inputs: median, min and max.
    #[command(after_help = EXIT_CODES)]
    Bench {
        /// The ONNX model to run.
        model: PathBuf,
        /// Bind a symbolic dimension of the inputs to a size (NAME=VALUE); repeatable.
        #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_dim)]
        dims: Vec<(String, i64)>,
        /// The size of the thread pool (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Timed runs.
        #[arg(long, default_value_t = 10)]
        repeat: usize,
        /// Untimed runs first.
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        /// How to print the timings.
        #[arg(long, value_enum, default_value = "text")]
        format: PlainFormat,
        #[command(flatten)]
        memory: Memory,
    },
}

/// The executor's memory budget.
#[derive(clap::Args, Debug)]
pub struct Memory {
    /// The most bytes of live tensors (K, M, G, T suffixes); an allocation past it ends the run.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value = "4G")]
    max_memory: u64,
}

/// What inference assumes about the inputs' sizes.
#[derive(clap::Args, Debug)]
pub struct Shapes {
    /// Bind a symbolic dimension of the graph inputs to a size (NAME=VALUE); repeatable.
    #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_dim)]
    dims: Vec<(String, i64)>,
    /// Accepted for old scripts; does nothing: a declared `dim_value: 0` is always the size 0.
    #[arg(long, hide = true)]
    zero_dims_are_sizes: bool,
    /// Shape rules declared as data for ops of any domain (a JSON file; see docs/op-rules.md).
    /// Default: the file named by ONNX_BCAST_OP_RULES, if set.
    #[arg(long = "op-rules", value_name = "FILE")]
    op_rules: Option<PathBuf>,
}

impl Shapes {
    /// The inference options these flags give; the same name bound twice to different sizes
    /// is an error, and so is a rules file that cannot be read.
    fn options(&self) -> Result<Options> {
        let file = self.op_rules.clone().or_else(|| std::env::var_os("ONNX_BCAST_OP_RULES").map(PathBuf::from));
        let op_rules = file.map(|path| onnx_bcast::ops::OpRules::load(&path)).transpose()?.map(std::sync::Arc::new);
        Ok(Options { bindings: bindings(&self.dims)?, op_rules, ..Options::default() })
    }
}

/// `--dim` values as a map; the same name bound twice to different sizes is an error.
fn bindings(dims: &[(String, i64)]) -> Result<HashMap<String, i64>> {
    let mut out = HashMap::new();
    for (name, value) in dims {
        if let Some(old) = out.insert(name.clone(), *value).filter(|old| old != value) {
            return Err(Error::Usage(format!("--dim binds '{name}' twice, to {old} and to {value}")));
        }
    }
    Ok(out)
}

/// Where a rewrite writes its model, and what it may overwrite or lose.
#[derive(clap::Args, Debug)]
pub struct Output {
    /// The file to write (through a temporary file and a rename).
    #[arg(short = 'o', long = "output", value_name = "OUT", required_unless_present = "in_place")]
    out: Option<PathBuf>,
    /// Replace the input file itself (refused otherwise).
    #[arg(long)]
    in_place: bool,
    /// Write even when the model holds protobuf fields this build cannot write back.
    #[arg(long)]
    allow_lossy: bool,
}

impl Output {
    /// Saves `model` (read from `input`) as these flags say.
    pub fn save(&self, model: &onnx_bcast::Model, input: &Path) -> Result<PathBuf> {
        let target = self.out.clone().unwrap_or_else(|| input.to_path_buf());
        let options = io::SaveOptions { allow_lossy: self.allow_lossy, in_place: self.in_place, input: Some(input) };
        io::save_checked(model, &target, &options)?;
        Ok(target)
    }
}

fn parse_input(s: &str) -> std::result::Result<(String, PathBuf), String> {
    let (name, file) = s.split_once('=').ok_or_else(|| format!("'{s}' is not NAME=FILE"))?;
    if file.is_empty() {
        return Err(format!("'{s}' names no file"));
    }
    Ok((name.to_string(), PathBuf::from(file)))
}

/// A byte count: digits with an optional K, M, G or T suffix (powers of 1024).
fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let unit = t.chars().last().and_then(|c| "KMGT".find(c.to_ascii_uppercase()));
    let digits = if unit.is_some() { &t[..t.len() - 1] } else { t };
    let shift = unit.map_or(0, |i| 10 * (i + 1));
    let n: u64 = digits.parse().map_err(|_| format!("'{s}' is not a byte count"))?;
    n.checked_mul(1u64 << shift).ok_or_else(|| format!("'{s}' is too large"))
}

fn parse_shape(s: &str) -> std::result::Result<(String, Vec<i64>), String> {
    let (name, dims) = s.split_once('=').ok_or_else(|| format!("'{s}' is not NAME=D0,D1,..."))?;
    let dims: Vec<i64> = dims
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| d.trim().parse::<i64>().ok().filter(|n| *n >= 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("'{s}' needs sizes of 0 or more, separated by commas"))?;
    if name.is_empty() {
        return Err(format!("'{s}' names no input"));
    }
    Ok((name.to_string(), dims))
}

fn parse_dim(s: &str) -> std::result::Result<(String, i64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("'{s}' is not NAME=VALUE"))?;
    // Spaces around the name are the shell's, as `--require` reads them.
    let name = name.trim();
    let value: i64 = value.trim().parse().map_err(|_| format!("'{value}' in '{s}' is not an integer"))?;
    if name.is_empty() || value < 0 {
        return Err(format!("'{s}' needs a name and a size of 0 or more"));
    }
    Ok((name.to_string(), value))
}

/// Runs the command and gives the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Infer { model, format, shapes } => {
            let options = shapes.options()?;
            let m = io::load(&model)?;
            infer::check_bindings(&options.bindings, &m.input_dims())?;
            let inf = infer::infer(&m, &options);
            let text = match format {
                PlainFormat::Json => report::infer_json(&model, &m, &inf),
                PlainFormat::Text => report::infer_text(&model, &m, &inf),
            };
            emit(format_args!("{text}"))?;
            Ok(if inf.has_errors() { FINDINGS } else { OK })
        }
        Command::Check { models, format, shapes, require, deny_warnings } => {
            check(&models, format, &shapes.options()?, &requirements(&require)?, deny_warnings)
        }
        Command::Annotate { model, out, shapes, fix_declared } => {
            rewrite(Pass::Annotate, &model, &out, &shapes.options()?, fix_declared)
        }
        Command::Expand { model, out, shapes, fix_declared } => {
            rewrite(Pass::Expand, &model, &out, &shapes.options()?, fix_declared)
        }
        Command::Implicit { model, out } => rewrite(Pass::Implicit, &model, &out, &Options::default(), false),
        Command::Bench { model, dims, threads, repeat, warmup, format, memory } => {
            bench::bench(&model, &bindings(&dims)?, threads, repeat, warmup, format, memory.max_memory)
        }
        Command::Run { model, inputs, output_dir, memory } => {
            run::run(&model, &inputs, output_dir.as_deref(), memory.max_memory)
        }
        Command::Test { cases, memory } => test::test(&cases, memory.max_memory),
        Command::Diff { old, new, format } => diff(&old, &new, format),
        Command::Verify { original, rewritten, dims, shapes, memory } => {
            verify::verify(&original, &rewritten, &bindings(&dims)?, &shapes.into_iter().collect(), memory.max_memory)
        }
    }
}

/// `annotate`, `expand`, `implicit`: runs `pass` on the model and writes it as `out` says.
/// A model with error findings is not rewritten: they are printed, and the exit code is 1.
fn rewrite(pass: Pass, model: &Path, out: &Output, options: &Options, fix_declared: bool) -> Result<u8> {
    let mut m = io::load(model)?;
    infer::check_bindings(&options.bindings, &m.input_dims())?;
    let done = match onnx_bcast::rewrite::run(pass, &mut m, options, fix_declared)? {
        Ok(done) => done,
        Err(errors) => {
            for d in &errors {
                eprintln!("{}: {d}", model.display());
            }
            eprintln!("onnx-bcast: {}: not rewritten: the model has error findings", model.display());
            return Ok(FINDINGS);
        }
    };
    for d in &done.warnings {
        eprintln!("{}: {d}", model.display());
    }
    let written = out.save(&m, model)?;
    eprintln!("onnx-bcast: {}: {}, written to {}", model.display(), done.summary, written.display());
    // The process ends next and the OS takes the memory back at once; freeing a large model
    // piece by piece would only add time (a tenth of the run at a million nodes).
    std::mem::forget(m);
    std::mem::forget(done);
    Ok(OK)
}

/// `diff`: the findings between two versions of a model; exit 1 when there are any.
fn diff(old: &Path, new: &Path, format: Format) -> Result<u8> {
    let found = onnx_bcast::diff::diff(&io::load(old)?, &io::load(new)?);
    let text = match format {
        Format::Json => report::diff_json(old, new, &found),
        Format::Sarif => report::diff_sarif(new, &found),
        Format::Github => found
            .iter()
            .map(|d| format!("::{} file={},title={}::{}\n", d.severity, new.display(), d.code, d.message))
            .collect(),
        Format::Text if found.is_empty() => format!("{} -> {}: no differences\n", old.display(), new.display()),
        Format::Text => {
            let mut out = format!("{} -> {}:\n", old.display(), new.display());
            out.extend(found.iter().map(|d| format!("{}[{}]: {}\n", d.severity, d.code, d.message)));
            out
        }
    };
    emit(format_args!("{text}"))?;
    Ok(if found.is_empty() { OK } else { FINDINGS })
}

/// The sizes `check --require NAME=SPEC` asks for, by dim name.
fn requirements(specs: &[String]) -> Result<HashMap<String, Vec<i64>>> {
    let mut pairs = Vec::new();
    for spec in specs {
        let (name, sizes) = spec.split_once('=').unwrap_or((spec, ""));
        pairs.push((name.to_string(), sizes.to_string()));
    }
    onnx_bcast::contract::requirements(pairs.iter().map(|(n, s)| (n, s)))
}

fn check(
    paths: &[PathBuf],
    format: Format,
    opts: &Options,
    required: &HashMap<String, Vec<i64>>,
    deny_warnings: bool,
) -> Result<u8> {
    let files = io::model_files(paths)?;
    let mut code = OK;
    let mut results = Vec::new();
    // A name bound with --dim must be declared by some model checked.
    let mut declared = std::collections::BTreeSet::new();
    for f in &files {
        let r = io::load(f).map(|m| {
            if !opts.bindings.is_empty() || !required.is_empty() {
                declared.extend(m.input_dims());
            }
            onnx_bcast::contract::check(&m, opts, required)
        });
        match &r {
            Ok(inf) if inf.has_errors() || (deny_warnings && !inf.diagnostics.is_empty()) => code = code.max(FINDINGS),
            Ok(_) => {}
            Err(e) => {
                eprintln!("onnx-bcast: {e}");
                code = FAILED;
            }
        }
        results.push((f.clone(), r));
    }
    if results.iter().any(|(_, r)| r.is_ok()) {
        infer::check_bindings(&opts.bindings, &declared)?;
        infer::check_declared(required.keys(), &declared, "required")?;
    }
    let text = match format {
        Format::Text => report::check_text(&results),
        Format::Json => report::check_json(&results),
        Format::Github => report::check_github(&results),
        Format::Sarif => report::check_sarif(&results),
    };
    emit(format_args!("{text}"))?;
    Ok(code)
}
