//! The kernels a compressed method inserts on a GPU's compute stream, and
//! what each costs on a compute device.
//!
//! * **Top-k selection** (`topk`): the k = ρ·m largest-magnitude elements
//!   of a gradient of m elements, with their indices (gTop-k §II-E; the
//!   authors' release selects over the whole model's gradient, flattened).
//! * **gTop-k merge** (`merge`): a receiver of gTop-k's tree adds the
//!   sender's k (index, value) pairs to its own and keeps the top k of the
//!   at most 2k candidates (gTop-k Alg. 2, lines 10–12). Its input is the
//!   2k candidates, so its cost is the selection's at m = 2k.
//!
//! A cost is a fitted form, `a + b·m + c·k` seconds. The defaults come
//! from measurements:
//! * the H200 and the H100 (Hopper, sm_90): dtsim's own CUDA kernels
//!   measured on each ([`MEASURED_GPUS`]: an H200 on 2026-11-26, an H100
//!   on 2026-11-27);
//! * other GPUs: the gTop-k authors' per-iteration sparsification times on
//!   the P102-100 (four models, m from 0.27M to 61M elements), fitted here
//!   by least squares on relative error ([`topk_p102_100`]); a GPU other
//!   than the P102-100 scales the per-element term by the ratio of memory
//!   bandwidths, as selection streams the gradient through memory (a
//!   derivation, said in every such cost's `source`);
//! * CPU devices: dtsim's CPU kernels on one core ([`CPU_PROFILE`]).
//!
//! docs/models.md §7 has the figures and their sources.

use super::gpus;

/// A kernel a method inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kernel {
    /// Top-k selection over m elements.
    TopK,
    /// gTop-k's merge of two sparse sets of k into the top k of their sum.
    Merge,
    /// DCT-DP's threshold: the magnitude below which a fraction η of a
    /// layer's m elements lies (by sorting, DCT Algorithm 1; or by
    /// selection).
    Threshold,
    /// DCT's mask: keep the elements at or above the threshold, as values
    /// and indices (k of m kept).
    Mask,
}

impl crate::names::Named for Kernel {
    const ALL: &'static [Kernel] = &[Kernel::TopK, Kernel::Merge, Kernel::Threshold, Kernel::Mask];
    const WHAT: &'static str = "kernel";
    fn name(self) -> &'static str {
        match self {
            Kernel::TopK => "topk",
            Kernel::Merge => "merge",
            Kernel::Threshold => "threshold",
            Kernel::Mask => "mask",
        }
    }
}

impl Kernel {
    /// The names a calibration profile may give this kernel's model, the
    /// preferred first: DCT's threshold is its sort (`threshold_sort`, the
    /// paper's algorithm: a comparison sort on the CPU backend,
    /// `threshold_radix_sort` on the CUDA backend), or else a selection
    /// (`threshold_select`).
    pub fn profile_names(self) -> &'static [&'static str] {
        match self {
            Kernel::TopK => &["topk"],
            Kernel::Merge => &["merge"],
            Kernel::Threshold => &["threshold_sort", "threshold_radix_sort", "threshold_select"],
            Kernel::Mask => &["mask"],
        }
    }
}

/// The compute devices that are CPUs: their kernels' default costs are
/// dtsim's own CPU measurements ([`CPU_PROFILE`]), not a GPU's.
pub const CPU_DEVICES: [&str; 1] = ["xeon-18c"];

/// The cores of each CPU device ([`CPU_DEVICES`], in order): `xeon-18c`'s
/// 18 (DCT §3.3: "Intel 18-core 2GHz processors").
pub const CPU_DEVICE_CORES: [u32; 1] = [18];

/// The profile the CPU devices' kernel costs come from: `dtsim calibrate
/// kernels --backend cpu` on one core of CI's machine (an Intel Xeon,
/// 2 cores), committed as `calibration/profiles/cpu-ci-xeon-1core.toml`.
pub const CPU_PROFILE: &str = include_str!("../../../calibration/profiles/cpu-ci-xeon-1core.toml");

/// [`CPU_PROFILE`]'s path, as sources name it.
const CPU_PROFILE_PATH: &str = "calibration/profiles/cpu-ci-xeon-1core.toml";

/// A GPU dtsim measured its CUDA kernels on, and the committed profile
/// its kernel costs come from.
#[derive(Debug, Clone, Copy)]
pub struct MeasuredGpu {
    /// The compute device's preset key.
    pub device: &'static str,
    /// The profile's text: `dtsim calibrate kernels --backend cuda` on
    /// that GPU.
    pub profile: &'static str,
    /// The profile's path in the repository, as sources name it.
    pub path: &'static str,
    /// What was measured, in words, for sources.
    pub what: &'static str,
    /// The GPU's name as `nvidia-smi` and the profile's `host` give it.
    pub name: &'static str,
}

/// The GPUs whose kernel costs are dtsim's own measurements, each by
/// `dtsim calibrate kernels --backend cuda` (64 Ki to 16 Mi elements,
/// densities 0.001 and 0.01, 7 repeats; driver 580.159.04, NVRTC 13.0);
/// docs/calibration.md says how each ran:
/// * `h200`: an NVIDIA H200, 2026-11-26 ("The first GPU run");
/// * `h100`: an NVIDIA H100 80GB HBM3 (SXM), 2026-11-27 ("The H100
///   run"), the first of two runs on that machine. Until then the H100's
///   costs were the H200's with their per-element terms scaled by memory
///   bandwidth (4.8/3.35), which the H100's measurement contradicts: its
///   selections' and sort's per-element terms are 1.1 to 1.2 times the
///   H200's, not 1.43.
pub const MEASURED_GPUS: [MeasuredGpu; 2] = [
    MeasuredGpu {
        device: "h200",
        profile: include_str!("../../../calibration/profiles/gpu-h200-cuda-kernels.toml"),
        path: "calibration/profiles/gpu-h200-cuda-kernels.toml",
        what: "dtsim's CUDA kernels on an NVIDIA H200",
        name: "NVIDIA H200",
    },
    MeasuredGpu {
        device: "h100",
        profile: include_str!("../../../calibration/profiles/gpu-h100-cuda-kernels.toml"),
        path: "calibration/profiles/gpu-h100-cuda-kernels.toml",
        what: "dtsim's CUDA kernels on an NVIDIA H100 80GB HBM3",
        name: "NVIDIA H100",
    },
];

/// The shape of a kernel's cost in its input size m and its selected or
/// kept elements k, as its algorithm has it. Profiles name it in
/// `[[kernel_model]] form`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `a + b·m + c·k`: one pass over the input and work per kept element
    /// (Top-k by selection, masking).
    Linear,
    /// `a + b·m`: one pass (a selection-based threshold; gTop-k's merge,
    /// whose input m is its 2k candidates, so k adds nothing m does not).
    PerElement,
    /// `a + b·m·log2(m)`: a comparison sort (the threshold by sorting).
    MLogM,
}

/// The backends `dtsim calibrate kernels --backend` measures on
/// (`calibration::calibrate::KernelBackend`'s names, which `sim` cannot
/// name: `calibration` depends on it), the only ones a profile's
/// `[[kernel_model]] backend` may name.
pub const PROFILE_BACKENDS: [&str; 2] = ["cpu", "cuda"];

/// Largest constant term (`a_s`) of a profile's kernel cost, seconds: an
/// hour a call. The constant is a kernel's launches and synchronisation;
/// the largest dtsim has measured is 0.22 ms (the H100's radix sort), and
/// no kernel that a training iteration calls takes an hour to start.
pub const MAX_CONSTANT_S: f64 = 3600.0;

/// Largest per-element term (`b_s`, `c_s`) of a profile's kernel cost,
/// seconds: a millisecond an element (per m, per m·log2 m, or per kept
/// element), at which a kernel over one 4 Mi-element layer takes more than
/// an hour. The largest dtsim has measured is 27 ns (one CPU core's Top-k,
/// per selected element), so the bound is over 30,000 times any real
/// device and leaves room for what-if profiles, while a term of a second
/// or more (a unit mistake) is refused here, naming the kernel and key,
/// instead of overflowing the simulated time later with neither.
pub const MAX_PER_ELEMENT_S: f64 = 1e-3;

/// What is wrong with a profile's `[[kernel_model]]` tables
/// ([`check_models`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelFault {
    /// The table at fault, 0-based in file order.
    pub index: usize,
    /// Its key at fault.
    pub key: &'static str,
    /// What is wrong, naming the kernel and the key.
    pub message: String,
}

/// The message for kernel `kernel`'s unknown form `form`.
fn unknown_form(kernel: &str, form: &str) -> String {
    format!(
        "`{kernel}` has form `{form}`, which dtsim does not know (known: {}, {}, {})",
        Form::Linear.name(),
        Form::PerElement.name(),
        Form::MLogM.name()
    )
}

/// Checks a profile's kernel models, in file order: each names a backend
/// of `dtsim calibrate kernels` ([`PROFILE_BACKENDS`]) and a form dtsim
/// knows ([`Form::parse`]), has cost terms that are seconds, finite, not
/// negative and at most [`MAX_CONSTANT_S`] (`a_s`) or
/// [`MAX_PER_ELEMENT_S`] (`b_s`, `c_s`), and models a kernel no earlier
/// table does (dtsim takes a kernel's model by its name, so of two it
/// could only pick one silently). `line(index, key)` gives the line of a
/// table's key where known, for the messages.
///
/// # Errors
/// The first table at fault, its key, and a message naming the kernel.
pub fn check_models(
    models: &[crate::profile::KernelModel],
    line: &dyn Fn(usize, &str) -> Option<usize>,
) -> Result<(), ModelFault> {
    use crate::profile::short_number;
    let fault = |index, key, message| {
        Err(ModelFault {
            index,
            key,
            message: format!("[[kernel_model]] {message}"),
        })
    };
    for (i, m) in models.iter().enumerate() {
        let name = &m.kernel;
        if !PROFILE_BACKENDS.contains(&m.backend.as_str()) {
            return fault(
                i,
                "backend",
                format!(
                    "`{name}` has backend `{}`, which dtsim does not know (known: {}, the backends of `dtsim calibrate kernels`)",
                    m.backend,
                    PROFILE_BACKENDS.join(", ")
                ),
            );
        }
        if Form::parse(&m.form).is_none() {
            return fault(i, "form", unknown_form(name, &m.form));
        }
        for (key, v, max, what) in [
            ("a_s", m.a_s, MAX_CONSTANT_S, "constant term is"),
            ("b_s", m.b_s, MAX_PER_ELEMENT_S, "per-element terms are"),
            ("c_s", m.c_s, MAX_PER_ELEMENT_S, "per-element terms are"),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                let bound = if key == "a_s" {
                    "an hour a call"
                } else {
                    "a millisecond an element"
                };
                // 3600, not 3.6e3; 1e-3, not 0.001
                let max = if max >= 1.0 {
                    short_number(max)
                } else {
                    format!("{max:e}")
                };
                return fault(
                    i,
                    key,
                    format!(
                        "`{name}` has {key} = {}: a kernel's {what} seconds, finite, not negative and at most {max} ({bound})",
                        short_number(v)
                    ),
                );
            }
        }
        if let Some(first) = models[..i].iter().position(|f| f.kernel == *name) {
            let at = line(first, "kernel")
                .map(|l| format!(" at line {l}"))
                .unwrap_or_default();
            return fault(
                i,
                "kernel",
                format!(
                    "`{name}` is modelled twice (#{}{at}, and #{}): a profile holds one model a kernel, and dtsim would not know which to use",
                    first + 1,
                    i + 1
                ),
            );
        }
    }
    Ok(())
}

impl Form {
    /// The form as profiles write it.
    pub fn name(self) -> &'static str {
        match self {
            Form::Linear => "a + b*m + c*k",
            Form::PerElement => "a + b*m",
            Form::MLogM => "a + b*m*log2(m)",
        }
    }

    /// The terms the form multiplies by its coefficients after the
    /// constant a: `[m, k]`, `[m]` or `[m·log2 m]` (the one place the forms are
    /// evaluated: [`KernelCost::time`], and the fits of `dtsim calibrate
    /// kernels`).
    pub fn terms(self, m: f64, k: f64) -> Vec<f64> {
        match self {
            Form::Linear => vec![m, k],
            Form::PerElement => vec![m],
            Form::MLogM => vec![m * m.max(2.0).log2()],
        }
    }

    /// The form a profile names, if it is one of these.
    pub fn parse(s: &str) -> Option<Form> {
        [Form::Linear, Form::PerElement, Form::MLogM]
            .into_iter()
            .find(|f| f.name() == s)
    }

    /// The form of kernel `kernel` (a name `dtsim calibrate kernels`
    /// writes): by its algorithm, not by its name's words. A threshold
    /// found by selection (`threshold_select`, CPU and CUDA) or by a radix
    /// sort (`threshold_radix_sort`, CUDA) is linear; only the comparison
    /// sort (`threshold_sort`, CPU) is m·log m.
    pub fn of(kernel: &str) -> Form {
        match kernel {
            "threshold_sort" => Form::MLogM,
            // a radix sort is linear in m, as a selection is
            "threshold_select" | "threshold_radix_sort" | "merge" | "membw" => Form::PerElement,
            _ => Form::Linear,
        }
    }
}

/// What one kernel costs: its [`Form`] with coefficients, in seconds, for
/// m input elements of which k are selected or kept.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCost {
    /// The form of the cost.
    pub form: Form,
    /// Constant term (launches, synchronisation), seconds.
    pub a_s: f64,
    /// Per input element, seconds.
    pub b_s: f64,
    /// Per selected element, seconds.
    pub c_s: f64,
    /// Where the figures come from: a preset's measurement, a derivation
    /// from one, or a calibration profile's path.
    pub source: String,
}

impl KernelCost {
    /// Seconds for `m` input elements, `k` of them selected.
    pub fn time(&self, m: f64, k: f64) -> f64 {
        let t = self
            .form
            .terms(m, k)
            .iter()
            .zip([self.b_s, self.c_s])
            .fold(self.a_s, |t, (x, c)| t + c * x);
        t.max(0.0)
    }
}

/// The costs of every kernel on one compute device.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCosts {
    /// Top-k selection.
    pub topk: KernelCost,
    /// gTop-k's merge (input: the 2k candidates).
    pub merge: KernelCost,
    /// DCT's threshold of a layer (m: its elements).
    pub threshold: KernelCost,
    /// DCT's mask (m elements, k kept).
    pub mask: KernelCost,
    /// Independent rows a kernel can run at once (DCT-MP's per-row
    /// thresholds and masks over a batch): a CPU device's cores, whose
    /// costs are one core's measurement (`xeon-18c`: 18, DCT §3.3's
    /// "Intel 18-core 2GHz processors"); 1 for a GPU, whose costs are
    /// already the whole device's (memory traffic, a selection over the
    /// whole input).
    pub row_parallelism: u32,
}

impl KernelCosts {
    /// The cost of `kernel`.
    pub fn of(&self, kernel: Kernel) -> &KernelCost {
        match kernel {
            Kernel::TopK => &self.topk,
            Kernel::Merge => &self.merge,
            Kernel::Threshold => &self.threshold,
            Kernel::Mask => &self.mask,
        }
    }

    fn set(&mut self, kernel: Kernel, cost: KernelCost) {
        match kernel {
            Kernel::TopK => self.topk = cost,
            Kernel::Merge => self.merge = cost,
            Kernel::Threshold => self.threshold = cost,
            Kernel::Mask => self.mask = cost,
        }
    }

    /// The documented defaults for compute device `gpu`: a CPU device
    /// ([`CPU_DEVICES`]) takes every kernel from [`CPU_PROFILE`]; a GPU
    /// dtsim measured (the H200, the H100: [`MEASURED_GPUS`]) every kernel
    /// from its own profile; another GPU
    /// (a preset key, or any other name: the slowest memory dtsim knows,
    /// as [`gpus::memory_bandwidth`] does) takes Top-k from the P102-100's
    /// measurements scaled by memory bandwidth, the merge as a Top-k over
    /// the 2k candidates, DCT's threshold as a Top-k selection of the kept
    /// elements (the k-th largest magnitude is the threshold), and the
    /// mask as its memory traffic at the spec-sheet bandwidth (4 bytes
    /// read an element, 8 written a kept one).
    pub fn preset(gpu: &str) -> KernelCosts {
        if CPU_DEVICES.contains(&gpu) {
            return cpu_defaults(gpu);
        }
        if let Some(i) = MEASURED_GPUS.iter().position(|g| g.device == gpu) {
            return measured_gpu_defaults(i);
        }
        let base = topk_p102_100();
        let (b_s, source) = if gpu == "p102-100" {
            (base.b_s, base.source.clone())
        } else {
            let ratio = gpus::memory_bandwidth("p102-100") / gpus::memory_bandwidth(gpu);
            (
                base.b_s * ratio,
                format!(
                    "DERIVED: the P102-100's measured Top-k (gTop-k authors' release) × memory bandwidth {:.1}/{:.1} GB/s",
                    gpus::memory_bandwidth("p102-100") / 1e9,
                    gpus::memory_bandwidth(gpu) / 1e9
                ),
            )
        };
        let topk = KernelCost {
            form: Form::Linear,
            a_s: base.a_s,
            b_s,
            c_s: 0.0,
            source,
        };
        let merge = KernelCost {
            form: Form::PerElement,
            source: "the Top-k selection's cost over the 2k candidates (the release merges on its hosts' CPUs and times no merge)".into(),
            ..topk.clone()
        };
        let threshold = KernelCost {
            source: format!(
                "a Top-k selection of the kept elements, whose smallest is the threshold ({})",
                topk.source
            ),
            ..topk.clone()
        };
        let bw = gpus::memory_bandwidth(gpu);
        let mask = KernelCost {
            form: Form::Linear,
            a_s: 0.0,
            b_s: 4.0 / bw,
            c_s: 8.0 / bw,
            source: format!(
                "DERIVED: memory traffic (4 bytes read an element, 8 written a kept one) at the spec-sheet {:.1} GB/s",
                bw / 1e9
            ),
        };
        KernelCosts {
            topk,
            merge,
            threshold,
            mask,
            row_parallelism: 1,
        }
    }
}

/// A CPU device's kernel costs: [`CPU_PROFILE`]'s fits, read once.
fn cpu_defaults(device: &str) -> KernelCosts {
    static COSTS: std::sync::OnceLock<KernelCosts> = std::sync::OnceLock::new();
    let i = CPU_DEVICES
        .iter()
        .position(|d| *d == device)
        .expect("a CPU device");
    KernelCosts {
        row_parallelism: CPU_DEVICE_CORES[i],
        ..COSTS
            .get_or_init(|| {
                read_profile(CPU_PROFILE, CPU_PROFILE_PATH, "one core of an Intel Xeon")
            })
            .clone()
    }
}

/// The kernel costs of [`MEASURED_GPUS`]`[i]`: its profile's fits, read
/// once.
fn measured_gpu_defaults(i: usize) -> KernelCosts {
    static COSTS: [std::sync::OnceLock<KernelCosts>; MEASURED_GPUS.len()] =
        [const { std::sync::OnceLock::new() }; MEASURED_GPUS.len()];
    let g = &MEASURED_GPUS[i];
    COSTS[i]
        .get_or_init(|| read_profile(g.profile, g.path, g.what))
        .clone()
}

/// A committed profile's fits (`text`, read from `path`; measured on
/// `what`) as kernel costs, each kernel by its preferred name
/// ([`Kernel::profile_names`]).
fn read_profile(text: &str, path: &str, what: &str) -> KernelCosts {
    let profile = crate::profile::Profile::from_toml(text).expect("a committed profile parses");
    let fit = |names: &[&str]| {
        let m = names
            .iter()
            .find_map(|n| profile.kernel_models.iter().find(|m| m.kernel == *n))
            .expect("a committed profile has every kernel");
        KernelCost {
            form: Form::parse(&m.form).expect("a known form"),
            a_s: m.a_s,
            b_s: m.b_s,
            c_s: m.c_s,
            source: format!(
                "measured: {path} (`{}`, {what}, {}, median residual {:.1}%)",
                m.kernel,
                m.form,
                m.median_abs_residual * 100.0
            ),
        }
    };
    KernelCosts {
        topk: fit(Kernel::TopK.profile_names()),
        merge: fit(Kernel::Merge.profile_names()),
        threshold: fit(Kernel::Threshold.profile_names()),
        mask: fit(Kernel::Mask.profile_names()),
        row_parallelism: 1,
    }
}

/// How a GPU preset's GPU is named where a profile's provenance names
/// the GPU it was measured on (`dtsim calibrate kernels --backend cuda`
/// writes `GPU 0: NVIDIA H200 (sm_90, …)` into `host`): the preset, a
/// substring the name holds, and substrings that name another GPU of the
/// family (an RTX 2080 Ti is not the `rtx2080` preset). Case ignored.
const GPU_NAMES: [(&str, &str, &[&str]); 8] = [
    ("titan-xp", "titan xp", &[]),
    ("p102-100", "p102-100", &[]),
    ("rtx2080", "rtx 2080", &[" ti", "super"]),
    ("rtx3090", "rtx 3090", &[" ti"]),
    ("v100", "v100", &[]),
    ("a100", "a100", &[]),
    ("h100", "h100", &[]),
    ("h200", "h200", &[]),
];

/// The GPU preset whose GPU a profile's provenance `host` names, if it
/// names one dtsim has a preset for (matched by the name the GPU is sold under).
pub fn gpu_preset_named(host: &str) -> Option<&'static str> {
    let lower = host.to_ascii_lowercase();
    // the measured GPU's name: after "GPU 0: ", up to its "(" (sm, memory)
    let name = lower
        .split_once("gpu 0:")
        .map_or(lower.as_str(), |(_, r)| r);
    let name = name.split('(').next().unwrap_or(name);
    GPU_NAMES
        .iter()
        .find(|(_, has, not)| name.contains(has) && !not.iter().any(|n| name.contains(n)))
        .map(|(preset, _, _)| *preset)
}

impl KernelCosts {
    /// These costs with `needed`'s replaced by calibration profile
    /// `profile`'s fitted models (`dtsim calibrate kernels`), read from
    /// `path` (for messages and sources), for compute device `device`.
    ///
    /// # Errors
    /// A message saying what is wrong: a model [`check_models`] refuses
    /// (an unknown backend or form, a cost term out of range, a kernel
    /// modelled twice), a kernel `needed` that the profile lacks (and the
    /// default that would apply without the profile), or a profile
    /// measured on another kind of device (a CPU's for a GPU preset) or on
    /// another GPU that has a preset ([`gpu_preset_named`]; a GPU without
    /// one is taken as the user's choice).
    pub fn with_profile(
        &self,
        profile: &crate::profile::Profile,
        path: &str,
        needed: &[Kernel],
        device: &str,
    ) -> Result<KernelCosts, String> {
        // a profile read by `Profile::from_toml` passed this, at its lines
        check_models(&profile.kernel_models, &|_, _| None)
            .map_err(|f| format!("kernel profile {path}: {}", f.message))?;
        let mut out = self.clone();
        for &kernel in needed {
            let names = kernel.profile_names();
            let name = names.join("` or `");
            let found = names
                .iter()
                .find_map(|n| profile.kernel_models.iter().find(|m| m.kernel == *n));
            let Some(m) = found else {
                let have: Vec<&str> = profile
                    .kernel_models
                    .iter()
                    .map(|m| m.kernel.as_str())
                    .collect();
                return Err(format!(
                    "kernel profile {path} has no `{name}` kernel model (it has: {}), which this method needs; without the profile the default would apply: {}",
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    },
                    self.of(kernel).source
                ));
            };
            let name = &m.kernel;
            let is_gpu = gpus::MEMORY_BANDWIDTH.iter().any(|(k, _, _)| *k == device);
            if m.backend == "cpu" && is_gpu {
                return Err(format!(
                    "kernel profile {path} was measured on a CPU (`{name}`: backend cpu), and the model computes on GPU `{device}`: measure on that GPU with `dtsim calibrate kernels --backend cuda`, or remove the key to use the GPU's defaults"
                ));
            }
            // a GPU's profile for another GPU that dtsim knows: its
            // kernels ran at that GPU's speed
            if m.backend != "cpu"
                && let Some(host) = &profile.provenance.host
                && let Some(measured) = gpu_preset_named(host)
                && measured != device
            {
                return Err(format!(
                    "kernel profile {path} was measured on another GPU (its provenance: `{host}`, the `{measured}` preset's), and the model computes on `{device}`: set `model.gpu = \"{measured}\"`, measure on the model's GPU with `dtsim calibrate kernels --backend cuda`, or remove the key to use `{device}`'s defaults"
                ));
            }
            if m.backend != "cpu" && CPU_DEVICES.contains(&device) {
                return Err(format!(
                    "kernel profile {path} was measured on a GPU (`{name}`: backend {}), and the model computes on CPU `{device}`: measure with `dtsim calibrate kernels --backend cpu`, or remove the key to use the CPU's defaults",
                    m.backend
                ));
            }
            // known: `check_models` above
            let form = Form::parse(&m.form)
                .ok_or_else(|| format!("kernel profile {path}: {}", unknown_form(name, &m.form)))?;
            let cost = KernelCost {
                form,
                a_s: m.a_s,
                b_s: m.b_s,
                c_s: m.c_s,
                source: format!(
                    "profile {path}: {} backend, {}, median residual {:.1}%",
                    m.backend,
                    m.form,
                    m.median_abs_residual * 100.0
                ),
            };
            out.set(kernel, cost);
        }
        Ok(out)
    }
}

/// The gTop-k authors' sparsification times on the P102-100 (one GPU of
/// their 32-node cluster, PyTorch 0.4 `torch.topk` over the flattened
/// gradient): model, gradient elements m, seconds per iteration.
/// Source: hclhkbu/gtopkssgd `scripts/icdcs2019/communication.py`,
/// `plot_breakdown()` (the 32-worker breakdowns of Fig. 11; research notes
/// in docs/research/gtopk-release.md); m is each model's parameter count
/// in dtsim's presets, which are the release's models.
pub const P102_100_TOPK_MEASURED: [(&str, u64, f64); 4] = [
    ("resnet20", 269_722, 0.001618),
    ("vgg16_cifar", 14_728_266, 0.091353),
    ("resnet50", 25_557_032, 0.15405),
    ("alexnet", 61_100_840, 0.383776),
];

/// Top-k selection on the P102-100: `a + b·m` fitted to
/// [`P102_100_TOPK_MEASURED`] by least squares on relative error (each
/// point's error as a fraction of its time, so the 1.6 ms point counts as
/// much as the 384 ms one).
pub fn topk_p102_100() -> KernelCost {
    let (a_s, b_s) = fit_relative(
        P102_100_TOPK_MEASURED
            .iter()
            .map(|&(_, m, t)| (m as f64, t)),
    );
    KernelCost {
        form: Form::Linear,
        a_s,
        b_s,
        c_s: 0.0,
        source: "measured: P102-100 torch.topk over the whole gradient, gTop-k authors' release (4 models), fitted a + b·m".into(),
    }
}

/// Least squares of `t ≈ a + b·m` on relative error: minimises
/// Σ((a + b·mᵢ − tᵢ)/tᵢ)², the weighted normal equations with weights
/// 1/tᵢ², with a ≥ 0 (where the free fit's intercept is negative, the best
/// line through the origin).
fn fit_relative(points: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut sw, mut sm, mut smm, mut st, mut smt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (m, t) in points {
        let w = 1.0 / (t * t);
        sw += w;
        sm += w * m;
        smm += w * m * m;
        st += w * t;
        smt += w * m * t;
    }
    let det = sw * smm - sm * sm;
    let a = (st * smm - sm * smt) / det;
    if a >= 0.0 {
        return (a, (sw * smt - sm * st) / det);
    }
    // a kernel takes no negative time at m = 0: the line through the
    // origin, Σw·m·t / Σw·m²
    (0.0, smt / smm)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fit recovers an exact line, and the P102-100's measured points
    /// lie within 5% of their fitted line (selection is linear in m over
    /// two decades: the form is right).
    #[test]
    fn the_fit_is_least_squares_and_the_measurements_are_linear() {
        let (a, b) = fit_relative([(1.0, 3.0), (2.0, 5.0), (10.0, 21.0)].into_iter());
        assert!(
            (a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12,
            "{a} {b}"
        );
        // a line whose free intercept would be negative goes through 0
        let (a, b) = fit_relative([(1.0, 1.0), (2.0, 3.0)].into_iter());
        assert_eq!(a, 0.0);
        // Σw·m·t / Σw·m² with w = 1/t²: (1 + 2/3) / (1 + 4/9)
        assert!((b - (5.0 / 3.0) / (13.0 / 9.0)).abs() < 1e-12, "{b}");
        let c = topk_p102_100();
        for (model, m, t) in P102_100_TOPK_MEASURED {
            let got = c.time(m as f64, 0.0);
            assert!((got - t).abs() / t < 0.05, "{model}: {got} against {t}");
        }
        // about 6 ns an element, at most a millisecond to launch
        assert!((5e-9..7e-9).contains(&c.b_s), "{}", c.b_s);
        assert!((0.0..1e-3).contains(&c.a_s), "{}", c.a_s);
    }

    /// A CPU device's kernels are the committed CPU profile's fits, each
    /// named as measured; the profile has every kernel.
    #[test]
    fn cpu_devices_take_the_measured_cpu_profile() {
        let c = KernelCosts::preset("xeon-18c");
        let p = crate::profile::Profile::from_toml(CPU_PROFILE).unwrap();
        let sort = p
            .kernel_models
            .iter()
            .find(|m| m.kernel == "threshold_sort")
            .unwrap();
        assert_eq!(c.threshold.form, Form::MLogM);
        assert_eq!((c.threshold.a_s, c.threshold.b_s), (sort.a_s, sort.b_s));
        for k in [&c.topk, &c.merge, &c.threshold, &c.mask] {
            assert!(
                k.source.starts_with("measured: calibration/profiles/"),
                "{}",
                k.source
            );
        }
        // DCT-MP's rows spread over the 18 cores; a GPU's cost is whole
        assert_eq!(c.row_parallelism, 18);
        // a GPU's mask is its memory traffic: 4 bytes in, 8 out per kept
        let g = KernelCosts::preset("rtx3090");
        assert_eq!(g.row_parallelism, 1);
        assert!((g.mask.time(1e6, 1e3) - (4e6 + 8e3) / 936.2e9).abs() < 1e-15);
    }

    /// The H200 and the H100 take every kernel from their own committed
    /// profiles, the sort-based threshold (`threshold_radix_sort`) for
    /// DCT's as a `kernel_profile` would.
    #[test]
    fn hopper_gpus_take_their_own_measured_profiles() {
        for g in MEASURED_GPUS {
            let p = crate::profile::Profile::from_toml(g.profile).unwrap();
            let model = |name: &str| p.kernel_models.iter().find(|m| m.kernel == name).unwrap();
            let costs = KernelCosts::preset(g.device);
            assert_eq!(costs.row_parallelism, 1);
            let host = p.provenance.host.as_deref().unwrap_or_default();
            assert!(host.contains(g.name), "{}: {host}", g.device);
            for (kernel, name) in [
                (Kernel::TopK, "topk"),
                (Kernel::Merge, "merge"),
                (Kernel::Threshold, "threshold_radix_sort"),
                (Kernel::Mask, "mask"),
            ] {
                let (m, c) = (model(name), costs.of(kernel));
                assert_eq!((c.a_s, c.b_s, c.c_s), (m.a_s, m.b_s, m.c_s), "{name}");
                assert_eq!(c.form, Form::parse(&m.form).unwrap(), "{name}");
                let expected = format!("measured: calibration/profiles/gpu-{}", g.device);
                assert!(c.source.starts_with(&expected), "{}", c.source);
            }
        }
        // the measurement's scale: Top-k of 16 Mi at density 0.001 took
        // 304 µs on the H200 and 339 µs on the H100 (the profiles' rows);
        // each fit over all 10 points (median residuals 6.5% and 7.4%) is
        // within 10% of it
        for (gpu, measured) in [("h200", 304.0e-6), ("h100", 339.0e-6)] {
            let t = KernelCosts::preset(gpu).topk.time(16_777_216.0, 16_777.0);
            assert!((t / measured - 1.0).abs() < 0.10, "{gpu}: {t}");
        }
    }

    /// Each Hopper GPU's default costs (a first run) against what was
    /// measured after: a second run of the same sizes (the H100's on the
    /// same machine, minutes later; the H200's on another machine the
    /// next day), 64 Mi elements, four times the largest size fitted, and
    /// the H200's third run on a third machine two days later.
    /// Top-k and the threshold's sort, the kernels a model's whole
    /// gradient or largest layer pays, at 4 Mi and more, within 15%: two
    /// runs' medians of one kernel at these sizes differ by up to 13%
    /// (the H100's Top-k at 4 Mi), so a profile can describe another run
    /// no closer than that spread, rounded up (observed at most 11.4% for
    /// Top-k, the H200's third run at 16 Mi and density 0.01, and 10.4%
    /// for the sort, the H200's at 64 Mi, whose relative-error fit leans
    /// on the small sizes). The
    /// H200's fit scaled by memory bandwidth, the H100's default before
    /// its own measurement, overstates its Top-k at 64 Mi by more than
    /// 20%.
    #[test]
    fn the_hopper_fits_describe_their_second_runs_and_64_mi() {
        let runs = [
            (
                "h100",
                include_str!("../../../calibration/profiles/gpu-h100-cuda-kernels-b.toml"),
            ),
            (
                "h100",
                include_str!("../../../calibration/profiles/gpu-h100-cuda-kernels-64mi.toml"),
            ),
            (
                "h200",
                include_str!("../../../calibration/profiles/gpu-h200-cuda-kernels-b.toml"),
            ),
            (
                "h200",
                include_str!("../../../calibration/profiles/gpu-h200-cuda-kernels-64mi.toml"),
            ),
            (
                "h200",
                include_str!("../../../calibration/profiles/gpu-h200-cuda-kernels-c.toml"),
            ),
        ];
        let mut checked = 0;
        for (gpu, text) in runs {
            let costs = KernelCosts::preset(gpu);
            let name = MEASURED_GPUS.iter().find(|g| g.device == gpu).unwrap().name;
            let p = crate::profile::Profile::from_toml(text).unwrap();
            let host = p.provenance.host.as_deref().unwrap_or_default();
            assert!(host.contains(name), "{host}");
            for row in &p.kernels {
                let cost = match row.kernel.as_str() {
                    "topk" => &costs.topk,
                    "threshold_radix_sort" => &costs.threshold,
                    _ => continue,
                };
                if row.m < 4 << 20 {
                    continue;
                }
                let k = (row.m as f64 * row.density).floor();
                let t = cost.time(row.m as f64, k);
                let err = t / row.median_s - 1.0;
                assert!(
                    err.abs() < 0.15,
                    "{gpu} {} m = {}: {t} against {}",
                    row.kernel,
                    row.m,
                    row.median_s
                );
                checked += 1;
            }
        }
        // each second run's 4 Mi and 16 Mi at two densities, and 64 Mi
        // at one, for two kernels on two GPUs; the H200's third run (a
        // third machine, 2026-11-28) at 4 Mi and 16 Mi
        assert_eq!(checked, 2 * (2 * (2 * 2) + 2) + 2 * 2 * 2);
        let h200 = KernelCosts::preset("h200");
        let p = crate::profile::Profile::from_toml(runs[1].1).unwrap();
        let row = p.kernels.iter().find(|r| r.kernel == "topk").unwrap();
        let scaled = h200.topk.a_s + h200.topk.b_s * 4.8 / 3.35 * row.m as f64;
        assert!(
            scaled / row.median_s > 1.20,
            "{scaled} against {}",
            row.median_s
        );
    }

    /// A `[[kernel_model]]` table as `dtsim calibrate kernels` writes it
    /// (8 lines and a blank one: `backend` on its 3rd, `a_s` 5th, `b_s`
    /// 6th, `c_s` 7th), with `key` set to `value` (a TOML value).
    fn model(kernel: &str, key: &str, value: &str) -> String {
        let v = |k: &str, d: &str| {
            if k == key {
                value.to_string()
            } else {
                d.to_string()
            }
        };
        format!(
            "[[kernel_model]]\nkernel = \"{kernel}\"\nbackend = {}\nform = {}\na_s = {}\nb_s = {}\nc_s = {}\nmedian_abs_residual = 0.05\n\n",
            v("backend", "\"cuda\""),
            v("form", "\"a + b*m\""),
            v("a_s", "0.0001"),
            v("b_s", "1e-11"),
            v("c_s", "0.0"),
        )
    }

    /// The profile's refusal of `text`: (line, message).
    fn refusal(text: &str) -> (Option<usize>, String) {
        match crate::profile::Profile::from_toml(text) {
            Err(crate::profile::ProfileError::Value { line, message }) => (line, message),
            other => panic!("{other:?}"),
        }
    }

    /// A backend `dtsim calibrate kernels` has not is refused when the
    /// profile is read, at its line and naming the kernel (until
    /// 2026-11-28 `backend = "tpu"` was read and used); its backends are
    /// read.
    #[test]
    fn an_unknown_backend_is_refused_at_its_line() {
        let text = format!(
            "{}{}",
            model("mask", "", ""),
            model("topk", "backend", "\"tpu\"")
        );
        assert_eq!(
            refusal(&text),
            (
                Some(12),
                "[[kernel_model]] `topk` has backend `tpu`, which dtsim does not know (known: cpu, cuda, the backends of `dtsim calibrate kernels`)".into()
            )
        );
        for b in PROFILE_BACKENDS {
            let p =
                crate::profile::Profile::from_toml(&model("topk", "backend", &format!("\"{b}\"")))
                    .unwrap();
            assert_eq!(p.kernel_models[0].backend, b);
        }
        // a form dtsim does not know, at its line too (was: only when a
        // method needed the kernel, and without a line)
        let (line, m) = refusal(&model("merge", "form", "\"a + b*m^2\""));
        assert_eq!(line, Some(4));
        assert!(
            m.contains("`merge` has form `a + b*m^2`, which dtsim does not know"),
            "{m}"
        );
    }

    /// Two models of one kernel are refused, naming it and both tables'
    /// lines (until 2026-11-28 the first was used, silently); one model
    /// each of the threshold's alternatives (`threshold_sort`,
    /// `threshold_select`) is not a duplicate. A profile built in code is
    /// refused the same by `with_profile`, without lines.
    #[test]
    fn a_kernel_modelled_twice_is_refused() {
        let text = format!(
            "{}{}{}",
            model("topk", "", ""),
            model("threshold_sort", "form", "\"a + b*m*log2(m)\""),
            model("topk", "a_s", "0.5")
        );
        assert_eq!(
            refusal(&text),
            (
                Some(20),
                "[[kernel_model]] `topk` is modelled twice (#1 at line 2, and #3): a profile holds one model a kernel, and dtsim would not know which to use".into()
            )
        );
        let ok = format!(
            "{}{}",
            model("threshold_sort", "form", "\"a + b*m*log2(m)\""),
            model("threshold_select", "", "")
        );
        assert!(crate::profile::Profile::from_toml(&ok).is_ok());
        let mut p = crate::profile::Profile::from_toml(&model("topk", "", "")).unwrap();
        p.kernel_models.push(p.kernel_models[0].clone());
        let e = KernelCosts::preset("h200")
            .with_profile(&p, "k.toml", &[Kernel::TopK], "h200")
            .unwrap_err();
        assert_eq!(
            e,
            "kernel profile k.toml: [[kernel_model]] `topk` is modelled twice (#1, and #2): a profile holds one model a kernel, and dtsim would not know which to use"
        );
    }

    /// A cost term is refused when the profile is read, at its line, with
    /// the bound the check enforces: `a_s` at most [`MAX_CONSTANT_S`],
    /// `b_s` and `c_s` at most [`MAX_PER_ELEMENT_S`] (until 2026-11-28: a
    /// limit of 10⁶ s that the message called "finite and not negative",
    /// 1e300 printed in 301 digits, and `b_s` from 1 to 10⁵ s accepted to
    /// overflow the simulated time later, naming neither kernel nor key).
    #[test]
    fn cost_terms_are_refused_at_their_line_with_their_bound() {
        for (key, value, line, shown, bound) in [
            (
                "b_s",
                "1e6",
                6,
                "b_s = 1000000:",
                "per-element terms are seconds, finite, not negative and at most 1e-3 (a millisecond an element)",
            ),
            ("b_s", "1e300", 6, "b_s = 1e300:", "at most 1e-3"),
            ("b_s", "1", 6, "b_s = 1:", "at most 1e-3"),
            ("b_s", "1e5", 6, "b_s = 100000:", "at most 1e-3"),
            ("b_s", "-1e-9", 6, "b_s = -0.000000001:", "not negative"),
            ("c_s", "0.0011", 7, "c_s = 0.0011:", "at most 1e-3"),
            ("c_s", "nan", 7, "c_s = NaN:", "finite"),
            (
                "a_s",
                "3600.5",
                5,
                "a_s = 3600.5:",
                "constant term is seconds, finite, not negative and at most 3600 (an hour a call)",
            ),
            ("a_s", "inf", 5, "a_s = inf:", "finite"),
        ] {
            let (l, m) = refusal(&model("topk", key, value));
            assert_eq!(l, Some(line), "{key} = {value}: {m}");
            assert!(
                m.starts_with(&format!("[[kernel_model]] `topk` has {shown}")) && m.contains(bound),
                "{key} = {value}: {m}"
            );
        }
        // the bounds themselves are terms
        for (key, value) in [
            ("a_s", "3600"),
            ("b_s", "1e-3"),
            ("c_s", "0.001"),
            ("a_s", "0"),
        ] {
            let p = crate::profile::Profile::from_toml(&model("topk", key, value))
                .unwrap_or_else(|e| panic!("{key} = {value}: {e}"));
            assert_eq!(p.kernel_models.len(), 1);
        }
    }

    /// Every committed kernel profile's terms are far inside the bounds
    /// (their largest: a 0.22 ms constant, 27 ns an element).
    #[test]
    fn the_measured_terms_are_far_inside_the_bounds() {
        let texts = [
            CPU_PROFILE,
            MEASURED_GPUS[0].profile,
            MEASURED_GPUS[1].profile,
        ];
        for t in texts {
            let p = crate::profile::Profile::from_toml(t).unwrap();
            for m in &p.kernel_models {
                assert!(m.a_s < 1e-3 && m.b_s < 1e-7 && m.c_s < 1e-7, "{m:?}");
            }
        }
    }

    /// A faster memory makes selection cheaper in proportion; the source
    /// says it is derived.
    #[test]
    fn other_gpus_scale_by_memory_bandwidth() {
        let p = KernelCosts::preset("p102-100");
        let r = KernelCosts::preset("rtx3090");
        assert!(p.topk.source.starts_with("measured"));
        assert!(r.topk.source.starts_with("DERIVED"));
        let ratio = p.topk.b_s / r.topk.b_s;
        assert!((ratio - 936.2 / 440.3).abs() < 1e-9, "{ratio}");
        assert_eq!(p.merge.time(50.0, 25.0), p.topk.time(50.0, 0.0));
    }
}
