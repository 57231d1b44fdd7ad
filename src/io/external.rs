//! Tensor files and external data: `TensorProto` files, and the checked reads of external
//! weights (inside the model's folder, through no link, within the file).

use super::*;

/// Reads a serialized `TensorProto` (a backend test case's `input_0.pb`).
pub fn read_tensor(path: &Path) -> Result<Tensor> {
    let bytes = read_limited(path, MAX_MESSAGE)?;
    let p = onnx::TensorProto::decode(bytes.as_slice())
        .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: format!("not a TensorProto: {e}") })?;
    Ok(tensor_from(p))
}

/// Encodes a tensor as a serialized `TensorProto`.
pub fn encode_tensor(t: &Tensor) -> Vec<u8> {
    tensor_to(t).encode_to_vec()
}

/// Why an external-data `location` is refused, if it is: it must be a plain relative path
/// (no root, drive, `.` or `..` component) so that it stays inside the model's folder. Checks
/// the text only; [`read_external`] also refuses links.
pub fn unsafe_location(location: &str) -> Option<String> {
    let rel = Path::new(location);
    if location.is_empty() {
        return Some("the location is empty".into());
    }
    if location.contains('\0') {
        return Some(format!("location '{}' holds a NUL byte", location.escape_debug()));
    }
    if rel.is_absolute() || rel.has_root() {
        return Some(format!(
            "location '{location}' is an absolute path; only paths inside the model's folder are read"
        ));
    }
    let up = rel.components().any(|c| !matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    // A backslash is a separator and `:` names a drive or stream on Windows: judge the
    // location as Windows would, too, so that a model is refused the same everywhere.
    if up || location.split(['/', '\\']).any(|part| part == "..") || location.starts_with('\\') {
        return Some(format!("location '{location}' leaves the model's folder ('..' or a drive)"));
    }
    if location.contains(':') {
        return Some(format!("location '{location}' holds ':', a drive or stream on Windows"));
    }
    None
}

/// Where an externally stored tensor's bytes are, checked with `stat` alone (nothing is read):
/// only a relative location inside `dir`, no symbolic links or multiply-linked files, and an
/// offset and length inside the file. Gives the file's path, its metadata and the length.
pub fn external_extent(
    dir: &Path,
    tensor: &str,
    location: &str,
    offset: u64,
    length: Option<u64>,
) -> Result<(PathBuf, fs::Metadata, u64)> {
    let bad = |reason: String| Error::ExternalData { tensor: tensor.to_string(), reason };
    if let Some(why) = unsafe_location(location) {
        return Err(bad(why));
    }
    let rel = Path::new(location);
    let full = dir.join(rel);
    // Every component below the model's folder must be a real directory or file, not a link.
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        let meta = fs::symlink_metadata(&at).map_err(|e| bad(format!("'{location}': {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(bad(format!("'{location}' goes through a symbolic link")));
        }
    }
    let meta = fs::symlink_metadata(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    if !meta.is_file() {
        return Err(bad(format!("'{location}' is not a regular file")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(bad(format!(
                "'{location}' has {} hard links; a linked file may live outside the model's folder",
                meta.nlink()
            )));
        }
    }
    let size = meta.len();
    let length = match length {
        Some(l) => l,
        None => size
            .checked_sub(offset)
            .ok_or_else(|| bad(format!("offset {offset} is past the end of '{location}' ({size} bytes)")))?,
    };
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(bad(format!("offset {offset} + length {length} is past the end of '{location}' ({size} bytes)")));
    }
    Ok((full, meta, length))
}

/// Reads the bytes of an externally stored tensor, after [`external_extent`]'s checks.
pub fn read_external(dir: &Path, tensor: &str, location: &str, offset: u64, length: Option<u64>) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let bad = |reason: String| Error::ExternalData { tensor: tensor.to_string(), reason };
    let (full, meta, length) = external_extent(dir, tensor, location, offset, length)?;
    let size = meta.len();
    let capacity =
        usize::try_from(length).map_err(|_| bad(format!("length {length} does not fit in memory on this machine")))?;
    let mut f = fs::File::open(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    // The file opened must be the one checked above: a link swapped in since is refused.
    let opened = f.metadata().map_err(|e| bad(format!("'{location}': {e}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if opened.dev() != meta.dev() || opened.ino() != meta.ino() || opened.nlink() > 1 {
            return Err(bad(format!("'{location}' changed while it was being opened")));
        }
    }
    if opened.len() < size {
        return Err(bad(format!("'{location}' shrank while it was being opened")));
    }
    f.seek(SeekFrom::Start(offset)).map_err(|e| bad(format!("'{location}': {e}")))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(capacity).map_err(|_| bad(format!("cannot allocate {length} bytes")))?;
    f.take(length).read_to_end(&mut buf).map_err(|e| bad(format!("'{location}': {e}")))?;
    if buf.len() as u64 != length {
        return Err(bad(format!("'{location}' ended after {} of {length} bytes", buf.len())));
    }
    Ok(buf)
}
