//! `onnx_bcast._native`: the library's jobs for the Python package. Each function takes a
//! model as a path or as bytes, runs with the GIL released, and gives back JSON text (which
//! `onnx_bcast/__init__.py` turns into dicts) or model bytes. Errors that end a job are the
//! package's typed exceptions; findings are data.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::rewrite::{self, Pass};
use onnx_bcast::{contract, io, report, Model};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

create_exception!(onnx_bcast, Error, PyException, "The job could not be done (the base of every onnx_bcast error).");
create_exception!(onnx_bcast, ModelError, Error, "The model could not be read: not ONNX, malformed, unsafe or missing external data, or data this build cannot write back.");
create_exception!(onnx_bcast, FileError, Error, "A file could not be read or written.");
create_exception!(onnx_bcast, UsageError, Error, "A bad argument: a dim no graph input declares, a bad size spec, a rules file with a mistake, an output that would overwrite the input.");
create_exception!(onnx_bcast, LimitError, Error, "A resource limit: a model over the size limit.");

/// The exception for a library error.
fn raise(e: onnx_bcast::Error) -> PyErr {
    use onnx_bcast::Error as E;
    let message = e.to_string();
    match e {
        E::Io { .. } => FileError::new_err(message),
        E::Decode { .. } | E::NoGraph { .. } | E::TooDeep { .. } | E::Tensor { .. } | E::ExternalData { .. } => {
            ModelError::new_err(message)
        }
        E::Lossy { .. } => ModelError::new_err(message),
        E::TooLarge { .. } | E::Budget { .. } => LimitError::new_err(message),
        E::Usage(_) | E::UnknownDim { .. } | E::WouldOverwrite { .. } | E::NoModels { .. } => {
            UsageError::new_err(message)
        }
        _ => Error::new_err(message),
    }
}

/// The name a model given as bytes goes by in reports and messages.
const BYTES: &str = "<bytes>";

/// Reads the model from `path` or decodes `data` (exactly one is given; the wrapper sees to it).
fn load(path: Option<&Path>, data: Option<&[u8]>) -> onnx_bcast::Result<(Model, PathBuf)> {
    match (path, data) {
        (Some(p), _) => Ok((io::load(p)?, p.to_path_buf())),
        (None, Some(d)) => Ok((io::decode(d, Path::new(BYTES), None)?, PathBuf::from(BYTES))),
        (None, None) => Err(onnx_bcast::Error::Usage("no model given".into())),
    }
}

/// Inference options from the keyword arguments.
fn options(dims: Option<HashMap<String, i64>>, op_rules: Option<PathBuf>) -> onnx_bcast::Result<Options> {
    let bindings = dims.unwrap_or_default();
    if let Some((name, v)) = bindings.iter().find(|(_, v)| **v < 0) {
        return Err(onnx_bcast::Error::Usage(format!("dims: '{name}' is bound to {v}; sizes are 0 or more")));
    }
    let op_rules = op_rules.map(|p| onnx_bcast::ops::OpRules::load(&p)).transpose()?.map(Arc::new);
    Ok(Options { bindings, op_rules, ..Options::default() })
}

#[pyfunction]
#[pyo3(name = "infer", signature = (path, data, dims, op_rules))]
fn py_infer(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<PyBackedBytes>,
    dims: Option<HashMap<String, i64>>,
    op_rules: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(|| {
        let options = options(dims, op_rules)?;
        let (m, name) = load(path.as_deref(), data.as_deref())?;
        infer::check_bindings(&options.bindings, &m.input_dims())?;
        let inf = infer::infer(&m, &options);
        Ok(report::infer_json(&name, &m, &inf))
    })
    .map_err(raise)
}

#[pyfunction]
#[pyo3(name = "check", signature = (path, data, dims, require, op_rules))]
fn py_check(
    py: Python<'_>,
    path: Option<PathBuf>,
    data: Option<PyBackedBytes>,
    dims: Option<HashMap<String, i64>>,
    require: Option<HashMap<String, String>>,
    op_rules: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(|| {
        let options = options(dims, op_rules)?;
        let required = contract::requirements(require.iter().flatten())?;
        let (m, name) = load(path.as_deref(), data.as_deref())?;
        let declared = m.input_dims();
        infer::check_bindings(&options.bindings, &declared)?;
        infer::check_declared(required.keys(), &declared, "required")?;
        let inf = contract::check(&m, &options, &required);
        Ok(report::model_json(&name, &inf).to_string())
    })
    .map_err(raise)
}

#[pyfunction]
#[pyo3(name = "sarif", signature = (paths, dims, op_rules))]
fn py_sarif(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    dims: Option<HashMap<String, i64>>,
    op_rules: Option<PathBuf>,
) -> PyResult<String> {
    py.detach(|| {
        let options = options(dims, op_rules)?;
        let mut declared = std::collections::BTreeSet::new();
        let results: Vec<_> = io::model_files(&paths)?
            .into_iter()
            .map(|f| {
                let r = io::load(&f).map(|m| {
                    declared.extend(m.input_dims());
                    contract::check(&m, &options, &HashMap::new())
                });
                (f, r)
            })
            .collect();
        // As `check`: a bound name must be declared by some model read.
        if results.iter().any(|(_, r)| r.is_ok()) {
            infer::check_bindings(&options.bindings, &declared)?;
        }
        Ok(report::check_sarif(&results))
    })
    .map_err(raise)
}

#[pyfunction]
#[pyo3(name = "diff", signature = (old_path, old_data, new_path, new_data))]
fn py_diff(
    py: Python<'_>,
    old_path: Option<PathBuf>,
    old_data: Option<PyBackedBytes>,
    new_path: Option<PathBuf>,
    new_data: Option<PyBackedBytes>,
) -> PyResult<String> {
    py.detach(|| {
        let (om, old) = load(old_path.as_deref(), old_data.as_deref())?;
        let (nm, new) = load(new_path.as_deref(), new_data.as_deref())?;
        Ok(report::diff_json(&old, &new, &onnx_bcast::diff::diff(&om, &nm)))
    })
    .map_err(raise)
}

/// How a rewrite runs and where its model goes (the keyword arguments).
struct Job {
    /// The file to write; none: give the bytes back.
    output: Option<PathBuf>,
    fix_declared: bool,
    allow_lossy: bool,
    in_place: bool,
}

/// What a rewrite came to.
enum Outcome {
    /// The model, encoded (no `output` was given).
    Bytes(Vec<u8>),
    /// The model was written to `output`.
    Written,
    /// Refused: the message and the error findings (JSON).
    Refused(String, String),
}

/// What a rewrite gives the wrapper: the model's bytes (none when it wrote `output`), or the
/// message and the error findings (JSON) that made it refuse.
type Rewritten = (Option<Py<PyBytes>>, Option<(String, String)>);

/// Runs `pass` on the model and writes it to `job.output` or gives its bytes.
fn rewrite_job(
    py: Python<'_>,
    pass: Pass,
    path: Option<PathBuf>,
    data: Option<PyBackedBytes>,
    options: onnx_bcast::Result<Options>,
    job: Job,
) -> PyResult<Rewritten> {
    let outcome = py
        .detach(|| -> onnx_bcast::Result<Outcome> {
            let options = options?;
            let (mut m, _) = load(path.as_deref(), data.as_deref())?;
            infer::check_bindings(&options.bindings, &m.input_dims())?;
            if let Err(errors) = rewrite::run(pass, &mut m, &options, job.fix_declared)? {
                let message = onnx_bcast::Error::Findings { errors: errors.len() }.to_string();
                return Ok(Outcome::Refused(message, report::diagnostics_json(&errors)));
            }
            let Some(out) = &job.output else {
                return Ok(Outcome::Bytes(io::encode_checked(&m, job.allow_lossy, Path::new(BYTES))?));
            };
            let flags =
                io::SaveOptions { allow_lossy: job.allow_lossy, in_place: job.in_place, input: path.as_deref() };
            io::save_checked(&m, out, &flags)?;
            Ok(Outcome::Written)
        })
        .map_err(raise)?;
    Ok(match outcome {
        Outcome::Bytes(b) => (Some(PyBytes::new(py, &b).unbind()), None),
        Outcome::Written => (None, None),
        Outcome::Refused(message, found) => (None, Some((message, found))),
    })
}

#[pyfunction]
#[pyo3(name = "rewrite", signature = (pass, path, data, output, *, dims, op_rules, fix_declared, allow_lossy, in_place))]
#[allow(clippy::too_many_arguments)]
fn py_rewrite(
    py: Python<'_>,
    pass: &str,
    path: Option<PathBuf>,
    data: Option<PyBackedBytes>,
    output: Option<PathBuf>,
    dims: Option<HashMap<String, i64>>,
    op_rules: Option<PathBuf>,
    fix_declared: bool,
    allow_lossy: bool,
    in_place: bool,
) -> PyResult<Rewritten> {
    let pass = match pass {
        "annotate" => Pass::Annotate,
        "expand" => Pass::Expand,
        "implicit" => Pass::Implicit,
        other => return Err(UsageError::new_err(format!("no rewrite is named '{other}'"))),
    };
    let job = Job { output, fix_declared, allow_lossy, in_place };
    rewrite_job(py, pass, path, data, options(dims, op_rules), job)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("FileError", py.get_type::<FileError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add_function(wrap_pyfunction!(py_infer, m)?)?;
    m.add_function(wrap_pyfunction!(py_check, m)?)?;
    m.add_function(wrap_pyfunction!(py_sarif, m)?)?;
    m.add_function(wrap_pyfunction!(py_diff, m)?)?;
    m.add_function(wrap_pyfunction!(py_rewrite, m)?)?;
    Ok(())
}
