//! Reading and writing an [`Mlp`] as the safetensors file PyTorch writes for its
//! `state_dict`: `safetensors.torch.save_file(model.state_dict(), path)` on an
//! `nn.Sequential(Linear, ReLU, …, Linear)`.
//!
//! The file holds `{i}.weight` (`[out × in]`) and `{i}.bias` (`[out]`) for the Linear
//! modules at even indices `i = 0, 2, 4, …` and nothing else (ReLUs hold no tensors). The
//! format is Hugging Face's: an 8-byte little-endian header length, a JSON header of names,
//! dtypes, shapes and offsets, then the little-endian data
//! (<https://github.com/huggingface/safetensors#format>).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use half::{bf16, f16};
use ndarray::{Array1, Array2};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

use crate::error::{Error, GapStart, Result};
use crate::mlp::{Linear, Mlp, Output, bias_key, check_finite, weight_key};

/// The largest file [`Mlp::read`] reads: 256 MiB (64 M `f32` parameters, far past any
/// member a population trains). [`Mlp::read_with_limit`] takes another.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// What a tensor is in the layout: a Linear module's weight or bias.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Weight,
    Bias,
}

/// The module index and part of a state-dict key, or why the key does not belong.
fn parse_key(key: &str) -> Result<(usize, Part), &'static str> {
    let (index, part) = key.split_once('.').ok_or("not `{index}.weight` or `{index}.bias`")?;
    let part = match part {
        "weight" => Part::Weight,
        "bias" => Part::Bias,
        _ => return Err("not `{index}.weight` or `{index}.bias`"),
    };
    // PyTorch writes the index in decimal without leading zeros.
    let canonical = !index.is_empty()
        && index.bytes().all(|b| b.is_ascii_digit())
        && (index == "0" || !index.starts_with('0'));
    let index: usize = match index.parse() {
        Ok(i) if canonical => i,
        _ => return Err("not `{index}.weight` or `{index}.bias` with a decimal index"),
    };
    if index % 2 == 1 {
        return Err("odd indices are the ReLUs of nn.Sequential(Linear, ReLU, …), which hold no tensors");
    }
    Ok((index, part))
}

impl Mlp {
    /// Read a network from the bytes of a safetensors file in PyTorch's `state_dict` layout.
    ///
    /// Tensors of dtype F32 (PyTorch's default) are read as they are; F64, F16 and BF16 are
    /// converted to `f32` (F64 rounded to nearest). Metadata (`__metadata__`, such as
    /// PyTorch's `{"format": "pt"}`) is ignored.
    ///
    /// # Errors
    ///
    /// [`Error::NotSafetensors`] for bytes the safetensors reader refuses;
    /// [`Error::NoLayers`] for a file without tensors; [`Error::UnexpectedTensor`] for a
    /// name other than `{i}.weight`/`{i}.bias` at an even `i` (extra, misspelt or prefixed
    /// keys, or tensors at a ReLU's index); [`Error::MissingTensor`] for a layer without its
    /// weight or bias; [`Error::IndexGap`] for indices that skip a layer;
    /// [`Error::UnsupportedDtype`]; [`Error::NotMatrix`] for a weight that is not 2-D with
    /// both sides at least 1; [`Error::BiasShape`]; [`Error::ShapesDontChain`];
    /// [`Error::NonFinite`] naming the tensor that holds a NaN or infinity.
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_networks::Mlp;
    ///
    /// let mlp = Mlp::random(&[11, 16, 2], 3)?;
    /// let bytes = mlp.to_bytes()?;
    /// assert_eq!(Mlp::from_bytes(&bytes)?, mlp);
    /// assert!(Mlp::from_bytes(b"not a safetensors file").is_err());
    /// # Ok::<(), metagame_networks::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let file = SafeTensors::deserialize(bytes).map_err(Error::NotSafetensors)?;
        let mut names: Vec<&str> = file.names();
        names.sort_unstable();
        let mut tensors: HashMap<(usize, bool), &str> = HashMap::with_capacity(names.len());
        let mut indices: Vec<usize> = Vec::with_capacity(names.len());
        for &name in &names {
            let (index, part) =
                parse_key(name).map_err(|reason| Error::UnexpectedTensor { key: name.into(), reason })?;
            tensors.insert((index, part == Part::Weight), name);
            indices.push(index);
        }
        if indices.is_empty() {
            return Err(Error::NoLayers);
        }
        indices.sort_unstable();
        indices.dedup();
        for (k, &index) in indices.iter().enumerate() {
            if index != 2 * k {
                let before = if k == 0 { GapStart::Start } else { GapStart::Index(indices[k - 1]) };
                return Err(Error::IndexGap { before, after: index });
            }
        }
        let mut layers = Vec::with_capacity(indices.len());
        for k in 0..indices.len() {
            let view = |key: String, is_weight: bool| match tensors.get(&(2 * k, is_weight)) {
                // INVARIANT: the name came from `file.names()`.
                Some(name) => Ok((key, file.tensor(name).expect("a listed tensor is present"))),
                None => Err(Error::MissingTensor { key }),
            };
            let (weight_name, weight) = view(weight_key(k), true)?;
            let (bias_name, bias) = view(bias_key(k), false)?;
            let &[outputs, inputs] = weight.shape() else {
                return Err(Error::NotMatrix { key: weight_name, shape: weight.shape().to_vec() });
            };
            if outputs == 0 || inputs == 0 {
                return Err(Error::NotMatrix { key: weight_name, shape: weight.shape().to_vec() });
            }
            if bias.shape() != [outputs] {
                return Err(Error::BiasShape { key: bias_name, shape: bias.shape().to_vec(), outputs });
            }
            let weight_values = to_f32(&weight_name, &weight)?;
            let bias_values = to_f32(&bias_name, &bias)?;
            check_finite(&weight_name, weight_values.iter())?;
            check_finite(&bias_name, bias_values.iter())?;
            layers.push(Linear {
                // INVARIANT: `to_f32` gives one value per element of the 2-D shape.
                weight: Array2::from_shape_vec((outputs, inputs), weight_values)
                    .expect("a tensor's values fill its shape"),
                bias: Array1::from(bias_values),
            });
        }
        let greedy = file_metadata(bytes).is_some_and(|m| m.get(OUTPUT_KEY).is_some_and(|v| v == "greedy"));
        Ok(Mlp::new(layers)?.with_output(if greedy { Output::Greedy } else { Output::Softmax }))
    }

    /// Read a network from a safetensors file in PyTorch's `state_dict` layout (see
    /// [`Mlp::from_bytes`]), of at most [`MAX_FILE_BYTES`].
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be read; [`Error::TooLarge`] past the limit
    /// (checked from the file's stated size, and again while reading, so a pipe cannot run
    /// past it); then those of [`Mlp::from_bytes`].
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_with_limit(path, MAX_FILE_BYTES)
    }

    /// [`Mlp::read`] with a limit of `max_bytes` instead of [`MAX_FILE_BYTES`].
    ///
    /// # Errors
    ///
    /// As [`Mlp::read`].
    pub fn read_with_limit(path: impl AsRef<Path>, max_bytes: u64) -> Result<Self> {
        let path = path.as_ref();
        let io = |source| Error::Io { path: path.into(), source };
        let too_large = |what| Error::TooLarge { what, limit: max_bytes, unit: "bytes" };
        let file = std::fs::File::open(path).map_err(io)?;
        let stated = file.metadata().map_err(io)?.len();
        if stated > max_bytes {
            return Err(too_large(format!("{} ({stated} bytes)", path.display())));
        }
        let mut bytes = Vec::with_capacity(stated as usize);
        // One byte past the limit tells a file that grew, or a pipe, from one at the limit.
        file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(path.display().to_string()));
        }
        Self::from_bytes(&bytes)
    }

    /// The network as the bytes of a safetensors file in PyTorch's `state_dict` layout:
    /// F32 tensors `{2k}.weight` and `{2k}.bias`, and the metadata `{"format": "pt"}` that
    /// `safetensors.torch.save_file` writes.
    ///
    /// # Errors
    ///
    /// [`Error::Serialize`] should the safetensors writer refuse (it does so only for a
    /// header past its 100 MB cap, millions of layers).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let tensors = self.tensor_views();
        safetensors::serialize(tensors, Some(self.metadata())).map_err(Error::Serialize)
    }

    /// Write the network to `path` as [`Mlp::to_bytes`] lays it out, so that PyTorch loads
    /// it with `model.load_state_dict(safetensors.torch.load_file(path))`. The file is
    /// written beside `path` and renamed over it, so a reader never sees half of it.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be written; [`Error::Serialize`].
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_networks::Mlp;
    ///
    /// let path = std::env::temp_dir().join(format!("mlp-doc-{}.safetensors", std::process::id()));
    /// let mlp = Mlp::random(&[30, 128, 128, 3], 1)?;
    /// mlp.write(&path)?;
    /// assert_eq!(Mlp::read(&path)?, mlp);
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), metagame_networks::Error>(())
    /// ```
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let tensors = self.tensor_views();
        safetensors::serialize_to_file(tensors, Some(self.metadata()), path).map_err(|e| match e {
            safetensors::SafeTensorError::IoError(source) => Error::Io { path: path.into(), source },
            other => Error::Serialize(other),
        })
    }

    /// PyTorch's metadata, and the output head where it is not the softmax.
    fn metadata(&self) -> HashMap<String, String> {
        let mut m = pt_metadata();
        if self.output() == Output::Greedy {
            m.insert(OUTPUT_KEY.into(), "greedy".into());
        }
        m
    }

    /// Every tensor by its key.
    fn tensor_views(&self) -> Vec<(String, F32Tensor<'_>)> {
        let mut views = Vec::with_capacity(2 * self.layers().len());
        for (k, layer) in self.layers().iter().enumerate() {
            views.push((weight_key(k), F32Tensor::new(&layer.weight)));
            views.push((bias_key(k), F32Tensor::new(&layer.bias)));
        }
        views
    }
}

/// The metadata key of a network's output head ([`Output`]).
const OUTPUT_KEY: &str = "metagame.output";

/// A file's `__metadata__`, if it has one.
fn file_metadata(bytes: &[u8]) -> Option<HashMap<String, String>> {
    SafeTensors::read_metadata(bytes).ok().and_then(|(_, m)| m.metadata().clone())
}

/// The metadata PyTorch's `save_file` writes.
fn pt_metadata() -> HashMap<String, String> {
    HashMap::from([("format".to_string(), "pt".to_string())])
}

/// An `f32` array as the writer sees it.
struct F32Tensor<'a> {
    shape: Vec<usize>,
    values: &'a [f32],
}

impl<'a> F32Tensor<'a> {
    fn new<D: ndarray::Dimension>(array: &'a ndarray::Array<f32, D>) -> Self {
        // INVARIANT: `Mlp::new` stores every array in standard layout.
        let values = array.as_slice().expect("arrays are stored in standard layout");
        Self { shape: array.shape().to_vec(), values }
    }
}

impl safetensors::View for F32Tensor<'_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// Little-endian, the format's byte order, whatever the machine's (a copy: the
    /// networks are small, and a borrowed view would need `unsafe` or big-endian care).
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
    fn data_len(&self) -> usize {
        4 * self.values.len()
    }
}

/// A tensor's values as `f32`, read little-endian from its dtype.
fn to_f32(key: &str, view: &TensorView<'_>) -> Result<Vec<f32>> {
    let data = view.data();
    let values = match view.dtype() {
        Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        Dtype::F16 => data.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::BF16 => data.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        other => return Err(Error::UnsupportedDtype { key: key.into(), dtype: format!("{other}") }),
    };
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file of `(name, dtype, shape, little-endian bytes)`.
    fn file(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views: Vec<(String, TensorView<'_>)> = tensors
            .iter()
            .map(|(name, dtype, shape, data)| {
                (name.to_string(), TensorView::new(*dtype, shape.clone(), data).unwrap())
            })
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    fn f32s(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// An F32 tensor of `shape` holding 0.5 everywhere.
    fn tensor<'a>(name: &'a str, shape: &[usize]) -> (&'a str, Dtype, Vec<usize>, Vec<u8>) {
        (name, Dtype::F32, shape.to_vec(), f32s(&vec![0.5; shape.iter().product()]))
    }

    /// A good 3 → 4 → 2 network's tensors.
    fn good() -> Vec<(&'static str, Dtype, Vec<usize>, Vec<u8>)> {
        vec![
            tensor("0.weight", &[4, 3]),
            tensor("0.bias", &[4]),
            tensor("2.weight", &[2, 4]),
            tensor("2.bias", &[2]),
        ]
    }

    fn read(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Result<Mlp> {
        Mlp::from_bytes(&file(tensors))
    }

    fn message(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> String {
        read(tensors).unwrap_err().to_string()
    }

    #[test]
    fn a_good_file_reads() {
        let mlp = read(&good()).unwrap();
        assert_eq!(mlp.sizes(), vec![3, 4, 2]);
        assert!(mlp.layers()[1].weight.iter().all(|&w| w == 0.5));
    }

    #[test]
    fn bytes_that_are_not_safetensors() {
        for bytes in [&b""[..], b"short", b"\x10\x00\x00\x00\x00\x00\x00\x00{not json here!}", &[0xff; 64]] {
            let err = Mlp::from_bytes(bytes).unwrap_err();
            assert!(matches!(err, Error::NotSafetensors(_)), "{err}");
            assert!(err.to_string().starts_with("not a safetensors file: "));
        }
        // A valid file cut short.
        let mut bytes = file(&good());
        bytes.truncate(bytes.len() - 4);
        assert!(matches!(Mlp::from_bytes(&bytes), Err(Error::NotSafetensors(_))));
    }

    #[test]
    fn no_tensors_no_layers() {
        assert!(matches!(read(&[]), Err(Error::NoLayers)));
    }

    #[test]
    fn extra_misnamed_and_prefixed_keys() {
        let with = |extra: (&'static str, Dtype, Vec<usize>, Vec<u8>)| {
            let mut tensors = good();
            tensors.push(extra);
            message(&tensors)
        };
        assert_eq!(
            with(tensor("0.running_mean", &[4])),
            "unexpected tensor `0.running_mean`: not `{index}.weight` or `{index}.bias`"
        );
        assert!(with(tensor("net.4.weight", &[2, 2])).starts_with("unexpected tensor `net.4.weight`"));
        assert!(with(tensor("weight", &[2, 2])).starts_with("unexpected tensor `weight`"));
        assert!(with(tensor("04.weight", &[2, 2])).contains("decimal index"));
        assert!(with(tensor("-2.bias", &[2])).contains("decimal index"));
        assert!(with(tensor("3.weight", &[2, 2])).contains("odd indices are the ReLUs"));
    }

    #[test]
    fn a_missing_weight_or_bias() {
        let mut tensors = good();
        tensors.retain(|t| t.0 != "2.bias");
        assert_eq!(
            message(&tensors),
            "missing tensor `2.bias` (every Linear layer needs a weight and a bias)"
        );
        let mut tensors = good();
        tensors.retain(|t| t.0 != "0.weight");
        assert!(matches!(read(&tensors), Err(Error::MissingTensor { key }) if key == "0.weight"));
    }

    #[test]
    fn a_gap_in_the_indices() {
        let mut tensors = good();
        tensors.extend([tensor("6.weight", &[2, 2]), tensor("6.bias", &[2])]);
        let err = read(&tensors).unwrap_err();
        assert!(matches!(err, Error::IndexGap { before: GapStart::Index(2), after: 6 }), "{err}");
        assert!(err.to_string().starts_with("layer indices jump from 2 to 6"));
        let shifted = [tensor("2.weight", &[2, 3]), tensor("2.bias", &[2])];
        let err = read(&shifted).unwrap_err();
        assert!(err.to_string().starts_with("layer indices jump from the start to 2"), "{err}");
    }

    #[test]
    fn weights_that_are_not_matrices() {
        let mut tensors = good();
        tensors[2] = tensor("2.weight", &[2, 4, 1]);
        assert_eq!(
            message(&tensors),
            "`2.weight` has shape [2, 4, 1]; a Linear weight is [out × in] with out, in ≥ 1"
        );
        tensors[2] = tensor("2.weight", &[8]);
        assert!(matches!(read(&tensors), Err(Error::NotMatrix { .. })));
        let empty = [tensor("0.weight", &[0, 3]), tensor("0.bias", &[0])];
        assert!(matches!(read(&empty), Err(Error::NotMatrix { .. })));
    }

    #[test]
    fn a_bias_of_another_shape() {
        let mut tensors = good();
        tensors[1] = tensor("0.bias", &[4, 1]);
        assert_eq!(message(&tensors), "`0.bias` has shape [4, 1], not [4] as its weight's 4 outputs need");
    }

    #[test]
    fn shapes_that_do_not_chain() {
        let mut tensors = good();
        tensors[2] = tensor("2.weight", &[2, 5]);
        assert_eq!(message(&tensors), "`0.weight` gives 4 outputs but `2.weight` takes 5 inputs");
    }

    #[test]
    fn non_finite_values_name_their_tensor() {
        for (bad, shown) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf")] {
            let mut tensors = good();
            let mut values = vec![0.5; 8];
            values[5] = bad;
            tensors[2].3 = f32s(&values);
            assert_eq!(
                message(&tensors),
                format!("`2.weight` holds a non-finite value {shown} at element 5")
            );
        }
        // An F64 past f32's range becomes infinite, and is refused the same way.
        let mut tensors = good();
        tensors[3] = (
            "2.bias",
            Dtype::F64,
            vec![2],
            [1.0, 1e300].iter().flat_map(|v: &f64| v.to_le_bytes()).collect(),
        );
        assert_eq!(message(&tensors), "`2.bias` holds a non-finite value inf at element 1");
    }

    #[test]
    fn other_float_widths_are_converted() {
        let mut tensors = good();
        tensors[0] = (
            "0.weight",
            Dtype::F64,
            vec![4, 3],
            (0..12).flat_map(|i| (f64::from(i) * 0.25).to_le_bytes()).collect(),
        );
        tensors[1] = (
            "0.bias",
            Dtype::F16,
            vec![4],
            [1.5f32, -2.0, 0.1, 0.0].iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect(),
        );
        tensors[3] = (
            "2.bias",
            Dtype::BF16,
            vec![2],
            [3.0f32, -0.5].iter().flat_map(|&v| bf16::from_f32(v).to_le_bytes()).collect(),
        );
        let mlp = read(&tensors).unwrap();
        assert_eq!(mlp.layers()[0].weight[[3, 2]], 2.75);
        assert_eq!(mlp.layers()[0].bias.to_vec(), vec![1.5, -2.0, f16::from_f32(0.1).to_f32(), 0.0]);
        assert_eq!(mlp.layers()[1].bias.to_vec(), vec![3.0, -0.5]);
    }

    #[test]
    fn other_dtypes_are_refused() {
        let mut tensors = good();
        tensors[1] = ("0.bias", Dtype::I32, vec![4], vec![0; 16]);
        assert_eq!(message(&tensors), "`0.bias` has dtype I32; only F32, F64, F16 and BF16 are read");
    }

    #[test]
    fn files_past_the_cap_are_refused_before_reading() {
        let dir = std::env::temp_dir().join(format!("metagame-networks-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.safetensors");
        let bytes = file(&good());
        std::fs::write(&path, &bytes).unwrap();
        Mlp::read_with_limit(&path, bytes.len() as u64).unwrap();
        let err = Mlp::read_with_limit(&path, bytes.len() as u64 - 1).unwrap_err();
        assert!(matches!(err, Error::TooLarge { unit: "bytes", .. }), "{err}");
        assert!(
            err.to_string().contains(&format!("({} bytes): more than the limit of", bytes.len())),
            "{err}"
        );
        let err = Mlp::read(dir.join("absent.safetensors")).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn written_files_carry_the_torch_metadata() {
        let bytes = read(&good()).unwrap().to_bytes().unwrap();
        let (_, metadata) = SafeTensors::read_metadata(&bytes).unwrap();
        assert_eq!(metadata.metadata().as_ref().unwrap()["format"], "pt");
        let file = SafeTensors::deserialize(&bytes).unwrap();
        let mut names = file.names();
        names.sort_unstable();
        assert_eq!(names, ["0.bias", "0.weight", "2.bias", "2.weight"]);
        assert!(file.iter().all(|(_, t)| t.dtype() == Dtype::F32));
    }
}
