//! The engine's own samplers for the continuous and geometric distributions,
//! with every transcendental function taken from the `libm` crate.
//!
//! Why not `rand_distr`: its samplers do their maths through num-traits'
//! `Float`, which calls `libm` only while num-traits' `std` feature is off.
//! Cargo unifies features across a build, and some builds turn `std` on
//! (the app through plotters, the test builds through proptest): those then
//! call the platform's `exp` and `ln` (glibc natively), which may differ in
//! the last bit from `libm` and from wasm32's maths. One bit is enough for a
//! rounded token count or an arrival order to change, and the engine promises
//! bit-identical results natively and in wasm32. The samplers here call
//! `libm::log`, `libm::exp`, `libm::log1p` and `libm::sqrt` by name (and
//! `libm::erfc` for the normal Ziggurat's tables), so every build on every
//! target computes the same bits from the same random stream.
//!
//! Each sampler is a pure function of the random stream: no cached second
//! value, no state beyond its parameters. Uniforms are drawn from 53 random
//! bits (the top bits of one `next_u64`), see [`open_closed01`] and
//! [`closed_open01`].
//!
//! Algorithms:
//! - [`StandardNormal`], [`Normal`], [`LogNormal`]: the Ziggurat method of
//!   G. Marsaglia and W. W. Tsang, "The Ziggurat Method for Generating Random
//!   Variables", Journal of Statistical Software 5(8), 2000, with 256 layers,
//!   the layer index and the abscissa taken from disjoint bits as suggested by
//!   J. A. Doornik, "An Improved Ziggurat Method to Generate Normal Random
//!   Samples", 2005, and Marsaglia's tail method (G. Marsaglia, "Generating a
//!   Variable from the Tail of the Normal Distribution", Technometrics 6(1),
//!   1964). The tables are computed once, with `libm`, on first use.
//! - [`Exp1`], [`Exp`]: the same authors' exponential Ziggurat (same paper),
//!   256 layers, one `next_u64` per try with disjoint bits for the layer and
//!   the abscissa as for the normal, the tail beyond `R` as `R - ln U` (the
//!   exponential is memoryless). Tables computed with `libm` and stored as
//!   literals, checked bit for bit by a test.
//! - [`Gamma`]: G. Marsaglia and W. W. Tsang, "A Simple Method for Generating
//!   Gamma Variables", ACM Transactions on Mathematical Software 26(3), 2000,
//!   with their boost `Gamma(a) = Gamma(a + 1) · U^(1/a)` for shapes below 1,
//!   `U^(1/a)` computed as `exp(ln U · (1/a))`.
//! - [`Geometric`]: inversion, `floor(ln U / ln(1 - p))` (L. Devroye,
//!   "Non-Uniform Random Variate Generation", Springer, 1986, chapter X, the
//!   geometric distribution).
//!
//! rand's `Uniform` on floats needs no transcendental function (a multiply
//! and an add), so it is already bit-identical everywhere and has no
//! counterpart here.

use std::f64::consts::{FRAC_PI_2, SQRT_2};
use std::fmt;
use std::sync::OnceLock;

use rand::Rng;

/// 2^-53, the spacing of the uniforms drawn from 53 bits.
const TWO_POW_MINUS_53: f64 = f64::EPSILON / 2.0;

/// A uniform on `(0, 1\]`: one of the 2^53 values `k / 2^53`, `k` in
/// `1..=2^53`, all equally likely. Never 0, so its logarithm is finite
/// (at least `-53 ln 2 ≈ -36.7`).
#[inline]
pub fn open_closed01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * TWO_POW_MINUS_53
}

/// A uniform on `\[0, 1)`: one of the 2^53 values `k / 2^53`, `k` in
/// `0..2^53`, all equally likely.
#[inline]
pub fn closed_open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_POW_MINUS_53
}

/// A parameter a sampler's `new` refused, with the reason.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerError {
    /// The sampler, e.g. `"Gamma"`.
    pub sampler: &'static str,
    /// The parameter, e.g. `"shape"`.
    pub param: &'static str,
    /// The value given.
    pub value: f64,
    /// What the value must be, e.g. `"finite and positive"`.
    pub requirement: &'static str,
}

impl fmt::Display for SamplerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} must be {}, got {}",
            self.sampler, self.param, self.requirement, self.value
        )
    }
}

impl std::error::Error for SamplerError {}

const FINITE_POSITIVE: &str = "finite and positive";

fn finite_positive(
    sampler: &'static str,
    param: &'static str,
    value: f64,
) -> Result<f64, SamplerError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: FINITE_POSITIVE,
        })
    }
}

fn finite_non_negative(
    sampler: &'static str,
    param: &'static str,
    value: f64,
) -> Result<f64, SamplerError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: "finite and at least 0",
        })
    }
}

fn finite(sampler: &'static str, param: &'static str, value: f64) -> Result<f64, SamplerError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: "finite",
        })
    }
}

/// The standard exponential distribution (rate 1, mean 1), by the
/// exponential Ziggurat (see the module's documentation). Each try takes one
/// `next_u64`: bits 0 to 7 pick the layer and bits 11 to 63 the abscissa;
/// about 98% of draws end there, with no maths function. A draw past the
/// base layer's edge `R ≈ 7.697` (probability `e^-R ≈ 4.5e-4`) is
/// `R - ln U` with `U` on `(0, 1\]`, so the draws lie in
/// `\[0, R + 53 ln 2\]`, `53 ln 2 ≈ 36.7` (the cut tail has probability
/// below 1e-19).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp1;

impl Exp1 {
    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let z = Ziggurat::exponential();
        loop {
            let bits = rng.next_u64();
            let i = (bits & 0xff) as usize;
            let x = ((bits >> 11) as f64 * TWO_POW_MINUS_53) * z.x[i];
            if x < z.x[i + 1] {
                // Under the layer above: certainly under the curve.
                return x;
            }
            if i == 0 {
                return exp_tail(rng);
            }
            // The wedge: a uniform height within the layer against f(x).
            let y = z.f[i] + (z.f[i + 1] - z.f[i]) * closed_open01(rng);
            if y < libm::exp(-x) {
                return x;
            }
        }
    }
}

/// The exponential distribution with rate `lambda` (mean `1 / lambda`):
/// [`Exp1`] times the mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp {
    lambda: f64,
    mean: f64,
}

impl Exp {
    /// The exponential with rate `lambda`; `lambda` and its inverse must be
    /// finite and positive.
    pub fn new(lambda: f64) -> Result<Self, SamplerError> {
        let lambda = finite_positive("Exp", "lambda", lambda)?;
        let mean = finite_positive("Exp", "1 / lambda", 1.0 / lambda)?;
        Ok(Exp { lambda, mean })
    }

    /// The exponential with the given mean (kept exactly: no round trip
    /// through the rate); `mean` and its inverse must be finite and positive.
    pub fn from_mean(mean: f64) -> Result<Self, SamplerError> {
        let mean = finite_positive("Exp", "mean", mean)?;
        let lambda = finite_positive("Exp", "1 / mean", 1.0 / mean)?;
        Ok(Exp { lambda, mean })
    }

    /// The mean, `1 / lambda`.
    #[cfg(test)]
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        Exp1.sample(rng) * self.mean
    }
}

/// Number of Ziggurat layers (a power of two: the layer index is 8 bits).
const ZIG_LAYERS: usize = 256;

/// Right edge of the base layer for 256 layers: the `R` for which the top
/// layer closes at 0 (the value rand_distr's tables use too; the test
/// `ziggurat_layers_have_equal_areas` checks it).
const ZIG_R: f64 = 3.654_152_885_361_009;

/// A Ziggurat for a decreasing unnormalised density `f` on `x >= 0` with
/// `f(0) = 1`: `exp(-x²/2)` for the normal ([`Ziggurat::get`]), `exp(-x)`
/// for the exponential ([`Ziggurat::exponential`]). Layer `i >= 1` is the
/// rectangle `\[0, x_i\] × \[f(x_i), f(x_(i+1))\]`, the base layer 0 is the
/// rectangle `\[0, R\] × \[0, f(R)\]` plus the tail beyond `R`, drawn as a
/// rectangle of width `x_0 = V / f(R)`. Every layer has the same area `V`.
/// `x` decreases from `x_0` to `x_256 = 0`.
#[derive(Debug)]
struct Ziggurat {
    x: [f64; ZIG_LAYERS + 1],
    f: [f64; ZIG_LAYERS + 1],
}

static ZIGGURAT: OnceLock<Ziggurat> = OnceLock::new();

fn normal_density(x: f64) -> f64 {
    libm::exp(-0.5 * x * x)
}

impl Ziggurat {
    /// The tables, computed once with `libm` (so the same bits everywhere).
    fn get() -> &'static Ziggurat {
        ZIGGURAT.get_or_init(Ziggurat::build)
    }

    fn area() -> f64 {
        // R f(R) plus the tail's area, sqrt(pi/2) erfc(R / sqrt 2).
        ZIG_R * normal_density(ZIG_R) + libm::sqrt(FRAC_PI_2) * libm::erfc(ZIG_R / SQRT_2)
    }

    fn build() -> Ziggurat {
        let v = Self::area();
        let mut x = [0.0; ZIG_LAYERS + 1];
        x[0] = v / normal_density(ZIG_R);
        x[1] = ZIG_R;
        for i in 1..ZIG_LAYERS - 1 {
            // f(x_(i+1)) = f(x_i) + V / x_i: layer i has area V.
            x[i + 1] = libm::sqrt(-2.0 * libm::log(normal_density(x[i]) + v / x[i]));
        }
        // The top layer closes at 0 (R is chosen for that; the recurrence
        // would give 1 + 3e-15 inside the logarithm).
        x[ZIG_LAYERS] = 0.0;
        let mut f = [0.0; ZIG_LAYERS + 1];
        for (fi, xi) in f.iter_mut().zip(&x) {
            *fi = normal_density(*xi);
        }
        Ziggurat { x, f }
    }
}

/// Right edge of the exponential Ziggurat's base layer for 256 layers: the
/// `R` for which the top layer closes at 0 (7.697117470131049714... to 50
/// digits, rounded; rand_distr's `ZIG_EXP_R` is the same double). The test
/// `exp_ziggurat_layers_have_equal_areas` checks it.
const EXP_ZIG_R: f64 = 7.697_117_470_131_05;

/// The exponential Ziggurat's tables as literals: the output of
/// `Ziggurat::build_exponential` (which computes them with `libm`),
/// printed with `{:?}`, which round-trips every `f64` exactly. The test
/// `exp_ziggurat_tables_match_libm` rebuilds them and compares bit for bit.
/// A static rather than a `OnceLock`: no initialisation check per draw,
/// which costs a few instructions on the simulator's hottest path.
#[rustfmt::skip]
static EXP_ZIGGURAT: Ziggurat = Ziggurat {
    x: [
        8.697117470131051, 7.69711747013105, 6.941033629377213,
        6.47837849383257, 6.144164665772473, 5.8821443157954,
        5.666410167454034, 5.4828906275260625, 5.323090505754398,
        5.1814872813015, 5.054288489981304, 4.9387770859012505,
        4.832939741025112, 4.735242996601741, 4.644491885420085,
        4.559737061707351, 4.480211746528422, 4.405287693473573,
        4.334443680317273, 4.267242480277366, 4.203313713735184,
        4.1423408656640515, 4.084051310408298, 4.028208544647937,
        3.974606066673789, 3.9230625001354897, 3.873417670399509,
        3.825529418522337, 3.7792709924116683, 3.734528894039798,
        3.6912010902374193, 3.649195515760854, 3.60842881312891,
        3.568825265648338, 3.5303158891293442, 3.4928376547740605,
        3.456332821132761, 3.420748357251121, 3.386035442460302,
        3.3521490309001103, 3.319047470970749, 3.2866921715990696,
        3.2550473085704508, 3.224079565286265, 3.193757903212241,
        3.1640533580259738, 3.134938858084441, 3.106389062339825,
        3.0783802152540907, 3.0508900166154556, 3.023897504455677,
        2.997382949516131, 2.97132775992109, 2.945714394895046,
        2.9205262865127413, 2.8957477686001423, 2.871364012015537,
        2.8473609656351893, 2.8237253024500357, 2.8004443702507382,
        2.777506146439757, 2.754899196562345, 2.7326126361947005,
        2.710636095867929, 2.688959688741804, 2.667573980773267,
        2.6464699631518096, 2.625639026797789, 2.6050729387408356,
        2.5847638202141408, 2.5647041263169053, 2.54488662711187,
        2.525304390037828, 2.505950763528594, 2.48681936174021,
        2.4679040502973653, 2.44919893297825, 2.43069833926442,
        2.412396812688871, 2.3942890999214583, 2.376370140536141,
        2.3586350574093378, 2.341079147703035, 2.323697874390197,
        2.3064868582835802, 2.28944187053227, 2.2725588255531552,
        2.2558337743672197, 2.2392628983129095, 2.2228425031110373,
        2.2065690132576643, 2.1904389667232205, 2.174449009937775,
        2.1585958930438864, 2.1428764653998424, 2.1272876713173687,
        2.1118265460190426, 2.0964902118017155, 2.0812758743932256,
        2.066180819490576, 2.0512024094685852, 2.03633808024877,
        2.0215853383189266, 2.006941757894519, 1.992404978213577,
        1.9779727009573609, 1.9636426877895488, 1.9494127580071854,
        1.9352807862970518, 1.9212447005915283, 1.9073024800183878,
        1.8934521529393082, 1.8796917950722112, 1.8660195276928282,
        1.8524335159111758, 1.8389319670188802, 1.82551312890352,
        1.8121752885263909, 1.7989167704602913, 1.7857359354841262,
        1.7726311792313059, 1.759600930889075, 1.7466436519460746,
        1.7337578349855718, 1.7209420025219357, 1.7081947058780582,
        1.6955145241015384, 1.6829000629175543, 1.6703499537164526,
        1.6578628525741732, 1.645437439303724, 1.6330724165359918,
        1.6207665088282583, 1.6085184617988586, 1.5963270412864836,
        1.5841910325326891, 1.57210923938623, 1.5600804835278883,
        1.5481036037145137, 1.5361774550410323, 1.5243009082192265,
        1.512472848872117, 1.5006921768428167, 1.4889578055167458,
        1.4772686611561336, 1.4656236822457451, 1.4540218188487932,
        1.4424620319720123, 1.4309432929388795, 1.4194645827699828,
        1.4080248915695353, 1.3966232179170417, 1.3852585682631215,
        1.3739299563284901, 1.3626364025050863, 1.3513769332583347,
        1.3401505805295042, 1.3289563811371161, 1.3177933761763245,
        1.306660610415174, 1.2955571316866008, 1.2844819902750124,
        1.273434238296241, 1.262412929069615, 1.2514171164808523,
        1.2404458543344064, 1.229498195693849, 1.2185731922087903,
        1.2076698934267613, 1.1967873460884033, 1.1859245934042024,
        1.175080674310912, 1.1642546227056791, 1.153445466655775,
        1.142652227581673, 1.1318739194110787, 1.1211095477013306,
        1.1103581087274115, 1.0996185885325975, 1.088889961938547,
        1.0781711915113723, 1.0674612264799677, 1.0567590016025512,
        1.046063435977044, 1.0353734317905283, 1.0246878730026172,
        1.0140056239570967, 1.0033255279156972, 0.9926464055072763,
        0.981967053085063, 0.9712862409839038, 0.9606027116686668,
        0.9499151777640762, 0.9392223199552625, 0.9285227847472107,
        0.9178151820700445, 0.9070980827156906, 0.8963700155898903,
        0.8856294647617519, 0.8748748662910254, 0.8641046048110047,
        0.8533170098423736, 0.8425103518103688, 0.8316828377342734,
        0.820832606554412, 0.8099577240574187, 0.7990561773554875,
        0.7881258688694929, 0.77716460975913, 0.766170112735435,
        0.7551399841819825, 0.7440717155005083, 0.7329626735843656,
        0.7218100903087565, 0.7106110509096553, 0.6993624811032322,
        0.688061132773748, 0.6767035680295228, 0.6652861413926782,
        0.6538049798476652, 0.6422559604245366, 0.6306346849334905,
        0.6189364513948763, 0.6071562216203003, 0.595288584291503,
        0.5833277127487697, 0.5712673165325886, 0.5591005855115408,
        0.5468201251633107, 0.5344178812371658, 0.5218850515921353,
        0.5092119824436546, 0.49638804551867133, 0.483401491653462,
        0.47023927508216923, 0.4568868409314204, 0.44332786607355257,
        0.42954394022541087, 0.4155141696003566, 0.40121467889627793,
        0.38661797794111974, 0.3716921453299174, 0.356399760258394,
        0.3406964810648493, 0.3245291170169096, 0.3078329546749323,
        0.29052795549123056, 0.27251318547846487, 0.2536583633859122,
        0.23379048305967487, 0.21267151063096676, 0.18995868962243198,
        0.16512762256418742, 0.13730498094001284, 0.10483850756581901,
        0.06385216381500192, 0.0,
    ],
    f: [
        0.00016706669230796367, 0.0004541343538414966, 0.0009672692823271743,
        0.0015362997803015726, 0.002145967743718907, 0.0027887987935740757,
        0.003460264777836904, 0.004157295120833797, 0.004877655983542396,
        0.005619642207205488, 0.006381905937319183, 0.007163353183634991,
        0.007963077438017043, 0.008780314985808977, 0.009614413642502213,
        0.01046481018102998, 0.0113310135978346, 0.012212592426255378,
        0.013109164931254991, 0.014020391403181943, 0.014945968011691148,
        0.015885621839973156, 0.01683910682603994, 0.017806200410911355,
        0.018786700744696024, 0.01978042433800974, 0.020787204072578114,
        0.021806887504283574, 0.02283933540638523, 0.023884420511558164,
        0.024942026419731776, 0.026012046645134207, 0.02709438378095579,
        0.028188948763978622, 0.029295660224637383, 0.030414443910466597,
        0.031545232172893595, 0.03268796350895953, 0.03384258215087432,
        0.035009037697397404, 0.03618728478193141, 0.03737728277295935,
        0.03857899550307484, 0.039792391023374105, 0.041017441380414806,
        0.04225412241331622, 0.043502413568888176, 0.04476229773294327,
        0.046033761076175156, 0.04731679291318154, 0.048611385573379476,
        0.04991753428270636, 0.051235237055126254, 0.052564494593071664,
        0.05390531019604605, 0.055257689676697, 0.05662164128374284,
        0.05799717563120063, 0.05938430563342025, 0.06078304644547963,
        0.06219341540854101, 0.06361543199980735, 0.06504911778675376,
        0.06649449638533979, 0.06795159342193662, 0.06942043649872875,
        0.07090105516237181, 0.07239348087570872, 0.07389774699236475,
        0.07541388873405841, 0.07694194317048052, 0.07848194920160644,
        0.0800339475423199, 0.08159798070923742, 0.08317409300963235,
        0.0847623305323681, 0.08636274114075689, 0.0879753744672702,
        0.08960028191003284, 0.09123751663104016, 0.09288713355604353,
        0.09454918937605583, 0.09622374255043278, 0.09791085331149216,
        0.09961058367063709, 0.10132299742595359, 0.10304816017125766,
        0.1047861393065701, 0.10653700405000158, 0.1083008254510337,
        0.11007767640518532, 0.11186763167005624, 0.11367076788274424,
        0.11548716357863345, 0.11731689921155547, 0.1191600571753276,
        0.12101672182667474, 0.12288697950954505, 0.12477091858083088,
        0.12666862943751062, 0.12858020454522814, 0.13050573846833072,
        0.13244532790138744, 0.13439907170221355, 0.13636707092642877,
        0.13834942886358012, 0.14034625107486234, 0.1423576454324721,
        0.14438372216063466, 0.14642459387834483, 0.1484803756438667,
        0.15055118500103984, 0.1526371420274428, 0.15473836938446797,
        0.15685499236936512, 0.15898713896931407, 0.1611349399175919,
        0.16329852875190168, 0.16547804187493587, 0.16767361861725005,
        0.16988540130252752, 0.17211353531531992, 0.17435816917135338,
        0.17661945459049477, 0.1788975465724782, 0.18119260347549618,
        0.18350478709776735, 0.185834262762197, 0.18818119940425418,
        0.19054576966319528, 0.1929281499767712, 0.1953285206795631,
        0.19774706610509873, 0.20018397469191118, 0.2026394390937089,
        0.20511365629383763, 0.20760682772422195, 0.21011915938898817,
        0.2126508619929782, 0.2152021510753786, 0.21777324714870044,
        0.22036437584335944, 0.22297576805812014, 0.225607660116684,
        0.22826029393071667, 0.2309339171696274, 0.23362878343743335,
        0.23634515245705962, 0.23908329026244915, 0.24184346939887724,
        0.24462596913189213, 0.24743107566532765, 0.25025908236886235,
        0.2531102900156295, 0.25598500703041543, 0.2588835497490163,
        0.26180624268936303, 0.26475341883506226, 0.2677254199320448,
        0.27072259679906, 0.27374530965280297, 0.27679392844851736,
        0.2798688332369729, 0.2829704145387808, 0.2860990737370769,
        0.28925522348967775, 0.2924392881618926, 0.2956517042812612,
        0.29889292101558174, 0.30216340067569347, 0.3054636192445902,
        0.30879406693456013, 0.31215524877417955, 0.3155476852271289,
        0.3189719128449572, 0.3224284849560891, 0.3259179723935562,
        0.3294409642641363, 0.33299806876180904, 0.33658991402867766,
        0.3402171490667802, 0.34388044470450263, 0.3475804946216372,
        0.35131801643748356, 0.3550937528667877, 0.35890847294874995,
        0.3627629733548179, 0.3666580797815142, 0.37059464843514606,
        0.3745735676159022, 0.3785957594095809, 0.38266218149600995,
        0.3867738290841378, 0.3909317369847973, 0.3951369818332903,
        0.39939068447523124, 0.40369401253053044, 0.40804818315203256,
        0.41245446599716135, 0.4169141864330031, 0.4214287289976168,
        0.42599954114303457, 0.43062813728845906, 0.4353161032156368,
        0.44006510084235406, 0.4448768734145487, 0.44975325116275516,
        0.45469615747461567, 0.45970761564213786, 0.4647897562504264,
        0.4699448252839602, 0.4751751930373776, 0.48048336393045443,
        0.48587198734188514, 0.49134386959403276, 0.49690198724154977,
        0.502549501841348, 0.5082897764106431, 0.5141263938147488,
        0.5200631773682338, 0.52610421398362, 0.5322538802630435,
        0.5385168720028621, 0.54489823767244, 0.5514034165406416,
        0.5580382822625878, 0.5648091929124005, 0.571723048664826,
        0.5787873586028452, 0.5860103184772683, 0.5934009016917337,
        0.6009689663652324, 0.6087253820796222, 0.6166821809152078,
        0.6248527387036661, 0.6332519942143663, 0.6418967164272663,
        0.6508058334145713, 0.660000841079, 0.6695063167319251,
        0.6793505722647657, 0.6895664961170783, 0.7001926550827885,
        0.7112747608050763, 0.7228676595935724, 0.7350380924314239,
        0.7478686219851955, 0.7614633888498967, 0.7759568520401161,
        0.7915276369724962, 0.8084216515230089, 0.826993296643051,
        0.8477855006239904, 0.8717043323812045, 0.9004699299257475,
        0.9381436808621761, 1.0,
    ],
};

impl Ziggurat {
    /// The exponential's tables.
    #[inline]
    fn exponential() -> &'static Ziggurat {
        &EXP_ZIGGURAT
    }

    /// The exponential's layer area: `R f(R)` plus the tail's area `f(R)`.
    #[cfg(test)]
    fn exponential_area() -> f64 {
        libm::exp(-EXP_ZIG_R) * (EXP_ZIG_R + 1.0)
    }

    /// The exponential's tables from `EXP_ZIG_R`, with `libm`: the source
    /// of the literals in [`EXP_ZIGGURAT`].
    #[cfg(test)]
    fn build_exponential() -> Ziggurat {
        let v = Self::exponential_area();
        let mut x = [0.0; ZIG_LAYERS + 1];
        x[0] = v / libm::exp(-EXP_ZIG_R);
        x[1] = EXP_ZIG_R;
        for i in 1..ZIG_LAYERS - 1 {
            // f(x_(i+1)) = f(x_i) + V / x_i: layer i has area V.
            x[i + 1] = 0.0 - libm::log(libm::exp(-x[i]) + v / x[i]);
        }
        // The top layer closes at 0 (the recurrence would give 1 + 3e-15
        // inside the logarithm).
        x[ZIG_LAYERS] = 0.0;
        let mut f = [0.0; ZIG_LAYERS + 1];
        for (fi, xi) in f.iter_mut().zip(&x) {
            *fi = libm::exp(-xi);
        }
        Ziggurat { x, f }
    }
}

/// The exponential's tail beyond `EXP_ZIG_R`: `R + Exp1` by inversion
/// (memorylessness), `R - ln U` with `U` on `(0, 1\]`.
#[cold]
fn exp_tail<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    EXP_ZIG_R - libm::log(open_closed01(rng))
}

/// The tail of the normal beyond `ZIG_R`, by Marsaglia's 1964 method:
/// `a = -ln(U1) / R`, `b = -ln(U2)`, accept `R + a` when `2b >= a²`.
#[cold]
fn normal_tail<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let a = 0.0 - libm::log(open_closed01(rng)) / ZIG_R;
        let b = 0.0 - libm::log(open_closed01(rng));
        if b + b >= a * a {
            return ZIG_R + a;
        }
    }
}

/// The standard normal distribution (mean 0, standard deviation 1), by the
/// Ziggurat method (see the module's documentation). Each try takes one
/// `next_u64`: bits 0 to 7 pick the layer, bit 8 the sign and bits 11 to 63
/// the abscissa; about 99% of draws end there, without any maths function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StandardNormal;

impl StandardNormal {
    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let z = Ziggurat::get();
        loop {
            let bits = rng.next_u64();
            let i = (bits & 0xff) as usize;
            let x = ((bits >> 11) as f64 * TWO_POW_MINUS_53) * z.x[i];
            // x >= 0: copy bit 8 into the sign bit.
            let signed = f64::from_bits(x.to_bits() | ((bits & 0x100) << 55));
            if x < z.x[i + 1] {
                // Under the layer above: certainly under the curve.
                return signed;
            }
            if i == 0 {
                let t = normal_tail(rng);
                return if bits & 0x100 == 0 { t } else { -t };
            }
            // The wedge: a uniform height within the layer against f(x).
            let y = z.f[i] + (z.f[i + 1] - z.f[i]) * closed_open01(rng);
            if y < normal_density(x) {
                return signed;
            }
        }
    }
}

/// The normal distribution with mean `mean` and standard deviation `sd`:
/// `mean + sd · Z` with `Z` from [`StandardNormal`].
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normal {
    mean: f64,
    sd: f64,
}

#[cfg(test)]
impl Normal {
    /// `mean` must be finite; `sd` finite and at least 0 (0 gives `mean`
    /// always, as rand_distr's does; the draw still consumes the stream).
    pub fn new(mean: f64, sd: f64) -> Result<Self, SamplerError> {
        Ok(Normal {
            mean: finite("Normal", "mean", mean)?,
            sd: finite_non_negative("Normal", "sd", sd)?,
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.mean + self.sd * StandardNormal.sample(rng)
    }
}

/// The lognormal distribution: `exp(mu + sigma · Z)` with `Z` from
/// [`StandardNormal`] and the exponential from `libm::exp`. Median
/// `exp(mu)`, mean `exp(mu + sigma²/2)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormal {
    mu: f64,
    sigma: f64,
}

impl LogNormal {
    /// `mu` must be finite; `sigma` finite and at least 0 (0 gives `exp(mu)`
    /// always, as rand_distr's does: a lognormal given by a tiny standard
    /// deviation has `sigma` 0 after rounding).
    pub fn new(mu: f64, sigma: f64) -> Result<Self, SamplerError> {
        Ok(LogNormal {
            mu: finite("LogNormal", "mu", mu)?,
            sigma: finite_non_negative("LogNormal", "sigma", sigma)?,
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        libm::exp(self.mu + self.sigma * StandardNormal.sample(rng))
    }
}

/// The gamma distribution with shape `k` and scale `theta` (mean
/// `k · theta`, variance `k · theta²`), by Marsaglia and Tsang's method (see
/// the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gamma {
    shape: f64,
    scale: f64,
    /// `a - 1/3`, where `a` is the shape, or the shape plus 1 below 1.
    d: f64,
    /// `1 / sqrt(9 d)`.
    c: f64,
    /// `1 / shape` for the boost below shape 1 (unused from 1 on).
    inv_shape: f64,
}

impl Gamma {
    /// `shape` and `scale` must be finite and positive.
    pub fn new(shape: f64, scale: f64) -> Result<Self, SamplerError> {
        let shape = finite_positive("Gamma", "shape", shape)?;
        let scale = finite_positive("Gamma", "scale", scale)?;
        let a = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        Ok(Gamma {
            shape,
            scale,
            d,
            c: 1.0 / libm::sqrt(9.0 * d),
            inv_shape: 1.0 / shape,
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let g = self.marsaglia_tsang(rng);
        if self.shape < 1.0 {
            // U^(1/a) as exp(ln U · (1/a)): a libm::log and a libm::exp cost
            // about 60% of a libm::pow. The relative error grows with
            // |ln U / a| (up to 22 units in the last place at a = 0.3, 150 at
            // a = 0.05, over a million draws; pow's is under one): immaterial
            // for a random draw, and the same bits everywhere.
            g * libm::exp(libm::log(open_closed01(rng)) * self.inv_shape) * self.scale
        } else {
            g * self.scale
        }
    }

    /// A Gamma(d + 1/3, 1) draw: `d v` with `v = (1 + c X)³`, `X` standard
    /// normal, accepted by the squeeze `U < 1 - 0.0331 X⁴` or else by
    /// `ln U < X²/2 + d (1 - v + ln v)`.
    fn marsaglia_tsang<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let Gamma { d, c, .. } = *self;
        loop {
            let x = StandardNormal.sample(rng);
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = open_closed01(rng);
            let x2 = x * x;
            if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v))
            {
                return d * v;
            }
        }
    }
}

/// The geometric distribution: the number of failures before the first
/// success of Bernoulli trials with success probability `p` (support 0, 1,
/// 2, ...; mean `(1 - p) / p`), like rand_distr's. Sampled by inversion,
/// `floor(ln U / ln(1 - p))` with `U` on `(0, 1\]` and `ln(1 - p)` as
/// `libm::log1p(-p)` (accurate for tiny `p`). `p = 1` gives 0 always
/// (`ln(1 - p) = -inf`); a quotient beyond `u64::MAX` (tiny `p`) saturates
/// to `u64::MAX` through the `as` cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometric {
    p: f64,
    /// `ln(1 - p)`, negative (`-inf` at `p = 1`).
    ln_q: f64,
}

impl Geometric {
    /// `p` must be in `(0, 1\]`.
    pub fn new(p: f64) -> Result<Self, SamplerError> {
        if !(p > 0.0 && p <= 1.0) {
            return Err(SamplerError {
                sampler: "Geometric",
                param: "p",
                value: p,
                requirement: "in (0, 1]",
            });
        }
        Ok(Geometric {
            p,
            ln_q: libm::log1p(-p),
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        // Both logarithms are <= 0, so the quotient is >= 0 (or -0) and the
        // truncating cast is the floor.
        (libm::log(open_closed01(rng)) / self.ln_q) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::Distribution;
    use rand_pcg::Pcg64Mcg;

    fn rng(seed: u64) -> Pcg64Mcg {
        Pcg64Mcg::seed_from_u64(seed)
    }

    /// Sample mean and (unbiased) sample variance, accumulated in the
    /// two-pass way for accuracy.
    fn mean_var(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        (mean, ss / (n - 1.0))
    }

    /// Checks the sample mean and variance of `xs` against the true mean,
    /// variance and fourth central moment `mu4`.
    ///
    /// Tolerances: the sample mean of n draws has standard error
    /// `sqrt(var / n)`, the sample variance `sqrt((mu4 - var²) / n)`
    /// (asymptotically normal in both cases). Each must lie within 5 standard
    /// errors, which a correct sampler misses with probability about 6e-7
    /// per check (normal approximation), while a wrong constant or formula
    /// shifts a moment by many standard errors at n = 200 000.
    fn check_moments(what: &str, xs: &[f64], mean: f64, var: f64, mu4: f64) {
        let n = xs.len() as f64;
        let (m, s2) = mean_var(xs);
        let se_mean = libm::sqrt(var / n);
        let se_var = libm::sqrt((mu4 - var * var) / n);
        assert!(
            (m - mean).abs() <= 5.0 * se_mean,
            "{what}: mean {m}, expected {mean} ± 5 × {se_mean}"
        );
        assert!(
            (s2 - var).abs() <= 5.0 * se_var,
            "{what}: variance {s2}, expected {var} ± 5 × {se_var}"
        );
    }

    /// The fourth central moment from the first four raw moments.
    fn central4(m1: f64, m2: f64, m3: f64, m4: f64) -> f64 {
        m4 - 4.0 * m1 * m3 + 6.0 * m1 * m1 * m2 - 3.0 * m1 * m1 * m1 * m1
    }

    const N: usize = 200_000;

    fn draws(seed: u64, mut f: impl FnMut(&mut Pcg64Mcg) -> f64) -> Vec<f64> {
        let mut r = rng(seed);
        (0..N).map(|_| f(&mut r)).collect()
    }

    #[test]
    fn exponential_moments() {
        // Exponential with rate l: mean 1/l, variance 1/l², mu4 9/l⁴.
        let xs = draws(1, |r| Exp1.sample(r));
        check_moments("Exp1", &xs, 1.0, 1.0, 9.0);
        for (seed, lambda) in [(2, 0.5), (3, 40.0), (4, 1e-3)] {
            let d = Exp::new(lambda).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            let m = 1.0 / lambda;
            check_moments(
                &format!("Exp({lambda})"),
                &xs,
                m,
                m * m,
                9.0 * m * m * m * m,
            );
        }
        let d = Exp::from_mean(7.0).unwrap();
        assert_eq!(d.mean(), 7.0);
        let xs = draws(5, |r| d.sample(r));
        check_moments("Exp(mean 7)", &xs, 7.0, 49.0, 9.0 * 49.0 * 49.0);
    }

    #[test]
    fn normal_moments() {
        // Normal: mu4 = 3 sd⁴.
        let xs = draws(11, |r| StandardNormal.sample(r));
        check_moments("StandardNormal", &xs, 0.0, 1.0, 3.0);
        for (seed, mean, sd) in [(12, 3.0, 0.5), (13, -1e3, 20.0), (14, 0.0, 1e-9)] {
            let d = Normal::new(mean, sd).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            let var = sd * sd;
            check_moments(
                &format!("Normal({mean}, {sd})"),
                &xs,
                mean,
                var,
                3.0 * var * var,
            );
        }
        // Symmetry: the sign bit is independent of the magnitude.
        let xs = draws(15, |r| StandardNormal.sample(r));
        let positive = xs.iter().filter(|&&x| x > 0.0).count() as f64;
        let n = xs.len() as f64;
        assert!((positive - n / 2.0).abs() <= 5.0 * libm::sqrt(n / 4.0));
    }

    #[test]
    fn lognormal_moments() {
        for (seed, mu, sigma) in [
            (21, 0.0, 0.2),
            (22, 1.0, 1.5),
            (23, -2.0, 0.2),
            (24, 6.0, 1.5),
        ] {
            let d = LogNormal::new(mu, sigma).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            // Raw moments E[X^k] = exp(k mu + k² sigma² / 2).
            let raw = |k: f64| libm::exp(k * mu + k * k * sigma * sigma / 2.0);
            let m1 = raw(1.0);
            let var = raw(2.0) - m1 * m1;
            let mu4 = central4(m1, raw(2.0), raw(3.0), raw(4.0));
            // For sigma 1.5 the variance's tolerance is wide (the kurtosis is
            // about 10 000): the logarithm's moments below are the sharp test.
            check_moments(&format!("LogNormal({mu}, {sigma})"), &xs, m1, var, mu4);
            let logs: Vec<f64> = xs.iter().map(|&x| libm::log(x)).collect();
            let s2 = sigma * sigma;
            check_moments(
                &format!("ln LogNormal({mu}, {sigma})"),
                &logs,
                mu,
                s2,
                3.0 * s2 * s2,
            );
        }
    }

    #[test]
    fn gamma_moments() {
        for (seed, shape, scale) in [
            (31, 0.3, 1.0),
            (32, 1.0, 2.0),
            (33, 2.5, 0.5),
            (34, 40.0, 3.0),
            (35, 0.3, 1e4),
        ] {
            let d = Gamma::new(shape, scale).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            // Mean k θ, variance k θ², mu4 = var² (3 + 6 / k).
            let var = shape * scale * scale;
            let mu4 = var * var * (3.0 + 6.0 / shape);
            check_moments(
                &format!("Gamma({shape}, {scale})"),
                &xs,
                shape * scale,
                var,
                mu4,
            );
        }
    }

    #[test]
    fn geometric_moments() {
        // p = 1: the first trial succeeds, always 0 failures.
        let one = Geometric::new(1.0).unwrap();
        let mut r = rng(40);
        assert!((0..10_000).all(|_| one.sample(&mut r) == 0));
        for (seed, p) in [(41, 0.5), (42, 0.01), (43, 1e-6), (44, 0.9)] {
            let d = Geometric::new(p).unwrap();
            let xs = draws(seed, |r| d.sample(r) as f64);
            // Mean q/p, variance q/p², kurtosis 9 + p²/q (q = 1 - p).
            let q = 1.0 - p;
            let var = q / (p * p);
            let mu4 = var * var * (9.0 + p * p / q);
            check_moments(&format!("Geometric({p})"), &xs, q / p, var, mu4);
        }
        // A tiny p saturates instead of overflowing.
        let tiny = Geometric::new(1e-300).unwrap();
        let mut r = rng(45);
        let big: Vec<u64> = (0..1000).map(|_| tiny.sample(&mut r)).collect();
        assert!(big.iter().all(|&k| k > 1 << 60));
        assert!(big.contains(&u64::MAX));
    }

    /// The two-sample Kolmogorov–Smirnov statistic, sup |F_a - F_b|, with
    /// ties handled (both empirical CDFs step past a shared value together,
    /// as needed for the geometric's integers).
    fn ks_two_sample(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let (n, m) = (a.len() as f64, b.len() as f64);
        let (mut i, mut j, mut d) = (0, 0, 0.0_f64);
        while i < a.len() && j < b.len() {
            let v = a[i].min(b[j]);
            while i < a.len() && a[i] <= v {
                i += 1;
            }
            while j < b.len() && b[j] <= v {
                j += 1;
            }
            d = d.max((i as f64 / n - j as f64 / m).abs());
        }
        d
    }

    /// The Kolmogorov–Smirnov critical value at level alpha (asymptotic):
    /// `c(alpha) sqrt((n + m) / (n m))` with `c(alpha) = sqrt(-ln(alpha / 2) / 2)`;
    /// 1.949 for alpha = 0.001. Conservative for discrete distributions.
    fn ks_critical(alpha: f64, n: usize, m: usize) -> f64 {
        let (n, m) = (n as f64, m as f64);
        libm::sqrt(-libm::log(alpha / 2.0) / 2.0) * libm::sqrt((n + m) / (n * m))
    }

    /// Draws `N` values from ours and `N` from rand_distr's (independent
    /// seeds) and asserts the KS statistic is below the alpha = 0.001
    /// critical value (about 0.0062 for 200 000 each).
    fn ks_against(
        what: &str,
        seed: u64,
        ours: impl FnMut(&mut Pcg64Mcg) -> f64,
        theirs: impl FnMut(&mut Pcg64Mcg) -> f64,
    ) {
        let a = draws(seed, ours);
        let b = draws(seed + 1_000_000, theirs);
        let d = ks_two_sample(a, b);
        let critical = ks_critical(0.001, N, N);
        assert!(
            d < critical,
            "{what}: KS statistic {d} >= critical {critical}"
        );
    }

    #[test]
    fn same_distributions_as_rand_distr() {
        ks_against(
            "Exp1",
            51,
            |r| Exp1.sample(r),
            |r| rand_distr::Exp1.sample(r),
        );
        let (ours, theirs) = (Exp::new(2.5).unwrap(), rand_distr::Exp::new(2.5).unwrap());
        ks_against("Exp(2.5)", 52, |r| ours.sample(r), |r| theirs.sample(r));
        ks_against(
            "StandardNormal",
            53,
            |r| StandardNormal.sample(r),
            |r| rand_distr::StandardNormal.sample(r),
        );
        let ours = Normal::new(-4.0, 3.0).unwrap();
        let theirs = rand_distr::Normal::new(-4.0, 3.0).unwrap();
        ks_against(
            "Normal(-4, 3)",
            54,
            |r| ours.sample(r),
            |r| theirs.sample(r),
        );
        for (seed, mu, sigma) in [(55, 0.0, 0.2), (56, 5.0, 1.5)] {
            let ours = LogNormal::new(mu, sigma).unwrap();
            let theirs = rand_distr::LogNormal::new(mu, sigma).unwrap();
            let what = format!("LogNormal({mu}, {sigma})");
            ks_against(&what, seed, |r| ours.sample(r), |r| theirs.sample(r));
        }
        for (seed, shape, scale) in [
            (57, 0.3, 1.0),
            (58, 1.0, 2.0),
            (59, 2.5, 1.0),
            (60, 40.0, 0.1),
        ] {
            let ours = Gamma::new(shape, scale).unwrap();
            let theirs = rand_distr::Gamma::new(shape, scale).unwrap();
            let what = format!("Gamma({shape}, {scale})");
            ks_against(&what, seed, |r| ours.sample(r), |r| theirs.sample(r));
        }
        for (seed, p) in [(61, 0.5), (62, 0.01), (63, 1e-6), (64, 0.9)] {
            let ours = Geometric::new(p).unwrap();
            let theirs = rand_distr::Geometric::new(p).unwrap();
            let what = format!("Geometric({p})");
            ks_against(
                &what,
                seed,
                |r| ours.sample(r) as f64,
                |r| theirs.sample(r) as f64,
            );
        }
    }

    /// The one-sample KS statistic of `xs` against the continuous CDF `cdf`.
    fn ks_one_sample(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        let mut d = 0.0_f64;
        for (i, &x) in xs.iter().enumerate() {
            let f = cdf(x);
            d = d
                .max((f - i as f64 / n).abs())
                .max(((i + 1) as f64 / n - f).abs());
        }
        d
    }

    #[test]
    fn exact_cdfs_of_exponential_and_normal() {
        // A finer check than the two-sample test: 2 million draws against the
        // exact CDF, critical value 1.949 / sqrt(n) ≈ 0.0014 at alpha = 0.001.
        let n = 2_000_000;
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(n as f64);
        let mut r = rng(71);
        let xs: Vec<f64> = (0..n).map(|_| Exp1.sample(&mut r)).collect();
        let d = ks_one_sample(xs, |x| -libm::expm1(-x));
        assert!(d < critical, "Exp1: KS {d} >= {critical}");
        let mut r = rng(72);
        let xs: Vec<f64> = (0..n).map(|_| StandardNormal.sample(&mut r)).collect();
        let d = ks_one_sample(xs, |x| 0.5 * libm::erfc(-x / SQRT_2));
        assert!(d < critical, "StandardNormal: KS {d} >= {critical}");
    }

    #[test]
    fn normal_tail_is_reached_and_correct() {
        // P(|Z| > R) = erfc(R / sqrt 2) ≈ 2.6e-4: the tail branch runs about
        // 520 times in 2 million draws; the count must be within 5 standard
        // errors of the binomial expectation.
        let n = 2_000_000;
        let p = libm::erfc(ZIG_R / SQRT_2);
        let mut r = rng(73);
        let beyond = (0..n)
            .filter(|_| StandardNormal.sample(&mut r).abs() > ZIG_R)
            .count() as f64;
        let expected = n as f64 * p;
        let se = libm::sqrt(n as f64 * p * (1.0 - p));
        assert!(
            (beyond - expected).abs() <= 5.0 * se,
            "{beyond} beyond R, expected {expected}"
        );
    }

    #[test]
    fn normal_tail_has_the_right_shape() {
        // The tail branch alone, against the normal's CDF conditional on
        // exceeding R, 1 - erfc(x / sqrt 2) / erfc(R / sqrt 2): 200 000 draws,
        // critical value 1.949 / sqrt(n) ≈ 0.0044 at alpha = 0.001. (The
        // whole-normal tests cannot see the tail's shape: it holds 2.6e-4 of
        // the mass.)
        let mut r = rng(74);
        let xs: Vec<f64> = (0..N).map(|_| normal_tail(&mut r)).collect();
        assert!(xs.iter().all(|&x| x >= ZIG_R));
        let q = libm::erfc(ZIG_R / SQRT_2);
        let d = ks_one_sample(xs, |x| 1.0 - libm::erfc(x / SQRT_2) / q);
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(N as f64);
        assert!(d < critical, "normal tail: KS {d} >= {critical}");
    }

    #[test]
    fn normal_mass_between_layer_edges() {
        // Where the Ziggurat's wedge test matters: |Z| between consecutive
        // layer edges x_(i+1) and x_i (and beyond R), 256 bins in all. A wrong
        // wedge test (accepting the whole rectangle, say) leaves the moments
        // and the CDF within their tolerances, since the wedges hold under 1%
        // of the mass, but puts up to tens of percent too much mass in the
        // bins near R. Pearson's chi-square over the bins, 2 million draws
        // (the smallest expected count is about 400), against its critical
        // value for 255 degrees of freedom at alpha = 0.001 from the
        // Wilson–Hilferty approximation (about 331).
        let n = 2_000_000;
        let z = Ziggurat::get();
        let mut r = rng(75);
        // Bin i (1..=255) is [x_(i+1), x_i); bin 0 is [R, inf).
        let mut counts = [0_u64; ZIG_LAYERS];
        for _ in 0..n {
            let a = StandardNormal.sample(&mut r).abs();
            let bin = z.x[1..].partition_point(|&e| e > a);
            counts[bin] += 1;
        }
        let upper = |x: f64| libm::erfc(x / SQRT_2); // P(|Z| >= x)
        let chi2 = chi_square(&counts, |bin| {
            if bin == 0 {
                upper(ZIG_R)
            } else {
                upper(z.x[bin + 1]) - upper(z.x[bin])
            }
        });
        let critical = chi_square_critical_0001(ZIG_LAYERS - 1);
        assert!(chi2 < critical, "chi-square {chi2} >= {critical}");
    }

    /// The chi-square critical value at alpha = 0.001 for `k` degrees of
    /// freedom, by the Wilson–Hilferty approximation (about 331 for 255).
    fn chi_square_critical_0001(k: usize) -> f64 {
        let k = k as f64;
        let h = 2.0 / (9.0 * k);
        let w = 1.0 - h + 3.090_232 * libm::sqrt(h); // z of 0.999
        k * w * w * w
    }

    /// Pearson's chi-square of `counts` against the probabilities `p`.
    fn chi_square(counts: &[u64], p: impl Fn(usize) -> f64) -> f64 {
        let n = counts.iter().sum::<u64>() as f64;
        let mut chi2 = 0.0;
        for (bin, &count) in counts.iter().enumerate() {
            let expected = n * p(bin);
            chi2 += (count as f64 - expected) * (count as f64 - expected) / expected;
        }
        chi2
    }

    #[test]
    fn ziggurat_layers_have_equal_areas() {
        let z = Ziggurat::get();
        let v = Ziggurat::area();
        assert_eq!(z.x[0] * z.f[1], v);
        for i in 1..ZIG_LAYERS {
            let area = z.x[i] * (z.f[i + 1] - z.f[i]);
            assert!(
                (area - v).abs() <= 1e-12 * v,
                "layer {i}: area {area}, V {v}"
            );
        }
        assert!(z.x.windows(2).all(|w| w[0] > w[1]));
    }

    #[test]
    fn exponential_tail_is_reached_and_correct() {
        // Only the tail branch returns draws beyond R (the layers return
        // x < x_1 = R), and P(X > R) = e^-R ≈ 4.5e-4: about 906 of 2 million
        // draws, which must be within 5 standard errors of the binomial
        // expectation.
        let n = 2_000_000;
        let p = libm::exp(-EXP_ZIG_R);
        let mut r = rng(76);
        let beyond = (0..n).filter(|_| Exp1.sample(&mut r) > EXP_ZIG_R).count() as f64;
        let expected = n as f64 * p;
        let se = libm::sqrt(n as f64 * p * (1.0 - p));
        assert!(
            (beyond - expected).abs() <= 5.0 * se,
            "{beyond} beyond R, expected {expected}"
        );
    }

    #[test]
    fn exponential_tail_has_the_right_shape() {
        // The tail branch alone, against the CDF conditional on exceeding R,
        // 1 - e^-(x - R): 200 000 draws, critical value ≈ 0.0044 at
        // alpha = 0.001 (the whole-distribution tests cannot see the tail's
        // shape: it holds 4.5e-4 of the mass).
        let mut r = rng(77);
        let xs: Vec<f64> = (0..N).map(|_| exp_tail(&mut r)).collect();
        assert!(xs.iter().all(|&x| x >= EXP_ZIG_R));
        let d = ks_one_sample(xs, |x| -libm::expm1(-(x - EXP_ZIG_R)));
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(N as f64);
        assert!(d < critical, "exponential tail: KS {d} >= {critical}");
    }

    #[test]
    fn exponential_mass_between_layer_edges() {
        // As `normal_mass_between_layer_edges`, for the exponential Ziggurat:
        // X between consecutive layer edges x_(i+1) and x_i, and beyond R,
        // 256 bins; the wedges hold about 1.1% of the mass, so a wrong wedge
        // test barely moves the moments or the CDF but shows here. Pearson's
        // chi-square over 2 million draws (the smallest expected count is
        // about 900, beyond R) against its alpha = 0.001 critical value (about 331).
        let n = 2_000_000;
        let z = Ziggurat::exponential();
        let mut r = rng(78);
        // Bin i (1..=255) is [x_(i+1), x_i); bin 0 is [R, inf).
        let mut counts = [0_u64; ZIG_LAYERS];
        for _ in 0..n {
            let x = Exp1.sample(&mut r);
            counts[z.x[1..].partition_point(|&e| e > x)] += 1;
        }
        let chi2 = chi_square(&counts, |bin| {
            if bin == 0 {
                libm::exp(-EXP_ZIG_R)
            } else {
                // P(x_(i+1) <= X < x_i) = e^-x_(i+1) - e^-x_i.
                z.f[bin + 1] - z.f[bin]
            }
        });
        let critical = chi_square_critical_0001(ZIG_LAYERS - 1);
        assert!(chi2 < critical, "chi-square {chi2} >= {critical}");
    }

    #[test]
    fn exp_ziggurat_layers_have_equal_areas() {
        // Every layer, the top one included (x_256 = 0 is set, not
        // computed: a wrong R leaves it too big or too small), has area V;
        // the base layer's rectangle of width x_0 stands for R f(R) plus the
        // tail's area f(R).
        let z = Ziggurat::exponential();
        let v = Ziggurat::exponential_area();
        assert_eq!(z.x[0] * z.f[1], v);
        assert_eq!(z.x[1], EXP_ZIG_R);
        for i in 1..ZIG_LAYERS {
            let area = z.x[i] * (z.f[i + 1] - z.f[i]);
            assert!(
                (area - v).abs() <= 1e-12 * v,
                "layer {i}: area {area}, V {v}"
            );
        }
        assert!(z.x.windows(2).all(|w| w[0] > w[1]));
        assert_eq!((z.x[ZIG_LAYERS], z.f[ZIG_LAYERS]), (0.0, 1.0));
        // f is the density at x, the tables' pairs agree.
        for (x, f) in z.x.iter().zip(&z.f) {
            assert_eq!(*f, libm::exp(-x));
        }
    }

    #[test]
    fn exp_ziggurat_tables_match_libm() {
        // The literal tables are exactly what libm computes from EXP_ZIG_R.
        let built = Ziggurat::build_exponential();
        let bits = |a: &[f64]| a.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&EXP_ZIGGURAT.x), bits(&built.x));
        assert_eq!(bits(&EXP_ZIGGURAT.f), bits(&built.f));
    }

    #[test]
    fn exp_is_exp1_times_the_mean() {
        // Exp draws Exp1 from the same stream and multiplies by the mean,
        // kept exactly as given to `from_mean`.
        for mean in [7.0, 0.1, 3e5] {
            let d = Exp::from_mean(mean).unwrap();
            let (mut a, mut b) = (rng(79), rng(79));
            for _ in 0..1000 {
                assert_eq!(d.sample(&mut a), Exp1.sample(&mut b) * mean);
            }
        }
    }

    /// The first draws from seed 2024, recorded when the samplers were
    /// written. They pin the algorithms and the way they consume the stream:
    /// a change to either (a constant, an order of draws, a maths function)
    /// changes simulation results for a given seed, and must be noticed here
    /// and deliberate. The same literals hold on every target, which is the
    /// point of this module. Re-recorded for Exp1 and Exp when they moved
    /// from inversion to the exponential Ziggurat, and for Gamma(0.3, 2)
    /// when its boost moved from `pow(U, 1/a)` to `exp(ln U · (1/a))` (the
    /// last digit of two draws).
    #[test]
    fn fixed_seed_gives_fixed_draws() {
        let first = |f: &mut dyn FnMut(&mut Pcg64Mcg) -> f64| {
            let mut r = rng(2024);
            (0..4).map(|_| f(&mut r)).collect::<Vec<f64>>()
        };
        assert_eq!(
            first(&mut |r| Exp1.sample(r)),
            [
                0.585367979939963,
                0.06271395349900345,
                1.3475915356979382,
                1.6360483110253776
            ]
        );
        let d = Exp::new(0.25).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                2.341471919759852,
                0.2508558139960138,
                5.390366142791753,
                6.5441932441015105
            ]
        );
        assert_eq!(
            first(&mut |r| StandardNormal.sample(r)),
            [
                0.4852754929977827,
                -0.04222960753055013,
                1.2738259971033374,
                1.1404228873513282
            ]
        );
        let d = Normal::new(10.0, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                10.970550985995565,
                9.9155407849389,
                12.547651994206674,
                12.280845774702657
            ]
        );
        let d = LogNormal::new(6.0, 0.8).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                594.7971329592222,
                390.0271351361789,
                1117.7363440494505,
                1004.5935490472306
            ]
        );
        let d = Gamma::new(0.3, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                1.874085561072371,
                1.1696598704874033,
                0.02141341535528762,
                2.6955663998813395
            ]
        );
        let d = Gamma::new(2.5, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                5.924691464843061,
                9.269146729746046,
                4.838070696038945,
                1.807358212290595
            ]
        );
        let d = Geometric::new(0.01).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r) as f64),
            [129.0, 399.0, 14.0, 67.0]
        );
    }

    #[test]
    fn new_rejects_bad_parameters() {
        let bad = [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        for x in bad {
            assert!(Exp::new(x).is_err(), "Exp::new({x})");
            assert!(Exp::from_mean(x).is_err(), "Exp::from_mean({x})");
            assert!(Gamma::new(x, 1.0).is_err(), "Gamma::new({x}, 1)");
            assert!(Gamma::new(1.0, x).is_err(), "Gamma::new(1, {x})");
            assert!(Geometric::new(x).is_err(), "Geometric::new({x})");
        }
        // A rate or mean whose inverse overflows.
        assert!(Exp::new(1e-310).is_err());
        assert!(Exp::from_mean(1e-310).is_err());
        // Standard deviations: 0 is a point mass, allowed (as rand_distr).
        for x in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(Normal::new(0.0, x).is_err(), "Normal::new(0, {x})");
            assert!(LogNormal::new(0.0, x).is_err(), "LogNormal::new(0, {x})");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(Normal::new(x, 1.0).is_err(), "Normal::new({x}, 1)");
            assert!(LogNormal::new(x, 1.0).is_err(), "LogNormal::new({x}, 1)");
        }
        assert!(Geometric::new(1.5).is_err());
        assert!(Geometric::new(1.0).is_ok());
        let point = LogNormal::new(2.0, 0.0).unwrap();
        assert_eq!(point.sample(&mut rng(1)), libm::exp(2.0));
        // The reason is spelled out.
        let e = Gamma::new(-2.0, 1.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Gamma shape must be finite and positive, got -2"
        );
        let e = Geometric::new(f64::NAN).unwrap_err();
        assert_eq!(e.to_string(), "Geometric p must be in (0, 1], got NaN");
    }
}
