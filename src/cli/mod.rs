//! Subcommands and their arguments.

mod annotate;
mod bench;
mod expand;
mod implicit;
mod report;
mod run;
mod test;
mod verify;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, Error, Result};

/// Writes to stdout. A reader that has gone (`onnx-bcast infer m.onnx | head`) is no error:
/// the rest of the output is dropped and the command ends with the code its work gives.
pub fn emit(args: std::fmt::Arguments) -> Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_fmt(args) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io { path: "<stdout>".into(), source: e }),
        _ => Ok(()),
    }
}

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

#[derive(Parser, Debug)]
#[command(
    name = "onnx-bcast",
    version,
    about = "An ONNX broadcasting pass: infer shapes, check, rewrite and run broadcasts"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Github,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print every tensor's inferred type and shape.
    Infer {
        model: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        shapes: Shapes,
    },
    /// Report findings only, over any number of models (directories are searched for *.onnx).
    Check {
        #[arg(required = true)]
        models: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        shapes: Shapes,
    },
    /// Write the model back with value_info for every tensor of every graph.
    Annotate {
        model: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        shapes: Shapes,
    },
    /// Write the model back with every implicit broadcast made explicit (Unsqueeze + Expand).
    Expand {
        model: PathBuf,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        shapes: Shapes,
    },
    /// Remove Expand/Tile nodes that implicit broadcasting makes redundant (the inverse of expand).
    Implicit {
        model: PathBuf,
        #[command(flatten)]
        out: Output,
    },
    /// Execute the model on the built-in CPU executor; writes one .npy per graph output.
    Run {
        model: PathBuf,
        /// A graph input and its file (.npy, or an ONNX TensorProto .pb).
        #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_input, num_args = 1.., required = true)]
        inputs: Vec<(String, PathBuf)>,
        /// Where to write the outputs (default: the current folder).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// The memory budget in bytes (K, M, G suffixes allowed).
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value = "4G")]
        max_memory: u64,
    },
    /// Run ONNX backend-format test case folders and compare their outputs.
    Test {
        #[arg(required = true)]
        cases: Vec<PathBuf>,
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value = "4G")]
        max_memory: u64,
    },
    /// Run two models on the same generated inputs and compare their outputs exactly.
    Verify {
        original: PathBuf,
        rewritten: PathBuf,
        #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_dim)]
        dims: Vec<(String, i64)>,
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value = "4G")]
        max_memory: u64,
    },
    /// Time whole-model runs on deterministic generated inputs: median, min and max.
    Bench {
        model: PathBuf,
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
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[arg(long, value_name = "BYTES", value_parser = parse_bytes, default_value = "4G")]
        max_memory: u64,
    },
}

/// What inference assumes about the inputs' sizes.
#[derive(clap::Args, Debug)]
pub struct Shapes {
    /// Bind a symbolic dimension before inference.
    #[arg(long = "dim", value_name = "NAME=VALUE", value_parser = parse_dim)]
    dims: Vec<(String, i64)>,
    /// Take `dim_value: 0` on a graph input as the size 0 (empty tensors), not as an exporter's
    /// "dynamic".
    #[arg(long)]
    zero_dims_are_sizes: bool,
}

impl Shapes {
    fn options(self) -> Options {
        Options {
            bindings: self.dims.into_iter().collect::<HashMap<_, _>>(),
            literal_zero_dims: self.zero_dims_are_sizes,
            ..Options::default()
        }
    }
}

/// Where a rewrite writes its model, and what it may overwrite or lose.
#[derive(clap::Args, Debug)]
pub struct Output {
    /// The file to write (written through a temporary file and a rename).
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
    let (digits, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let n: u64 = digits.parse().map_err(|_| format!("'{s}' is not a byte count"))?;
    n.checked_mul(1u64 << shift).ok_or_else(|| format!("'{s}' is too large"))
}

fn parse_dim(s: &str) -> std::result::Result<(String, i64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("'{s}' is not NAME=VALUE"))?;
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
            if format == Format::Github {
                return Err(Error::Usage("infer prints text or json; github is for check".into()));
            }
            let m = io::load(&model)?;
            let inf = infer::infer(&m, &shapes.options());
            let text = match format {
                Format::Json => report::infer_json(&model, &m, &inf),
                _ => report::infer_text(&model, &m, &inf),
            };
            emit(format_args!("{text}"))?;
            Ok(if inf.has_errors() { FINDINGS } else { OK })
        }
        Command::Check { models, format, shapes } => check(&models, format, &shapes.options()),
        Command::Annotate { model, out, shapes } => annotate::run(&model, &out, &shapes.options()),
        Command::Expand { model, out, shapes } => expand::run(&model, &out, &shapes.options()),
        Command::Implicit { model, out } => implicit::run(&model, &out),
        Command::Bench { model, dims, threads, repeat, warmup, format, max_memory } => {
            bench::bench(&model, &dims.into_iter().collect(), threads, repeat, warmup, format, max_memory)
        }
        Command::Run { model, inputs, output_dir, max_memory } => {
            run::run(&model, &inputs, output_dir.as_deref(), max_memory)
        }
        Command::Test { cases, max_memory } => test::test(&cases, max_memory),
        Command::Verify { original, rewritten, dims, max_memory } => {
            verify::verify(&original, &rewritten, &dims.into_iter().collect(), max_memory)
        }
    }
}

/// Prints the error findings of a model a rewrite will not touch; true when there are any.
fn refuse(path: &Path, inf: &infer::Inference) -> bool {
    if !inf.has_errors() {
        return false;
    }
    for d in inf.diagnostics.iter().filter(|d| d.severity == onnx_bcast::Severity::Error) {
        eprintln!("{}: {d}", path.display());
    }
    eprintln!("onnx-bcast: {}: not rewritten: the model has error findings", path.display());
    true
}

fn check(paths: &[PathBuf], format: Format, opts: &Options) -> Result<u8> {
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files)?;
    }
    let mut code = OK;
    let mut results = Vec::new();
    for f in &files {
        let r = io::load(f).map(|m| {
            let inf = infer::infer(&m, opts);
            (m, inf)
        });
        match &r {
            Ok((_, inf)) if inf.has_errors() => code = code.max(FINDINGS),
            Ok(_) => {}
            Err(e) => {
                eprintln!("onnx-bcast: {e}");
                code = FAILED;
            }
        }
        results.push((f.clone(), r));
    }
    emit(format_args!("{}", report::check(&results, format)))?;
    Ok(code)
}

/// Adds `path` (or the `*.onnx` files below it, sorted) to `out`.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut stack = vec![path.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
        for e in entries {
            let e = e.map_err(|source| Error::Io { path: dir.clone(), source })?;
            let p = e.path();
            // Symbolic links to folders are not followed: a link loop would never end.
            let is_link = e.file_type().map(|t| t.is_symlink()).unwrap_or(false);
            if p.is_dir() && !is_link {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "onnx") {
                found.push(p);
            }
        }
    }
    // A directory that holds no model is a mistake (a wrong path), not a clean bill of health.
    if found.is_empty() {
        return Err(Error::NoModels { path: path.to_path_buf() });
    }
    found.sort();
    out.extend(found);
    Ok(())
}
