//! The Ziggurat method (see the module's documentation in `samplers`):
//! the normal's and the exponential's tables, their tails beyond the base
//! layer, and the loop both samplers share.

use std::f64::consts::{FRAC_PI_2, SQRT_2};
use std::sync::OnceLock;

use rand::Rng;

use super::{TWO_POW_MINUS_53, closed_open01, open_closed01};

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
pub(super) struct Ziggurat {
    x: [f64; ZIG_LAYERS + 1],
    f: [f64; ZIG_LAYERS + 1],
}

static ZIGGURAT: OnceLock<Ziggurat> = OnceLock::new();

pub(super) fn normal_density(x: f64) -> f64 {
    libm::exp(-0.5 * x * x)
}

impl Ziggurat {
    /// The tables, computed once with `libm` (so the same bits everywhere).
    pub(super) fn get() -> &'static Ziggurat {
        ZIGGURAT.get_or_init(Ziggurat::build)
    }

    fn area() -> f64 {
        // R f(R) plus the tail's area, sqrt(pi/2) erfc(R / sqrt 2).
        ZIG_R * normal_density(ZIG_R) + libm::sqrt(FRAC_PI_2) * libm::erfc(ZIG_R / SQRT_2)
    }

    fn build() -> Ziggurat {
        Self::layers(ZIG_R, Self::area(), normal_density, |y| {
            libm::sqrt(-2.0 * libm::log(y))
        })
    }

    /// The tables for the density `f` with base-layer edge `r` and layer
    /// area `v`; `inverse` is f's inverse on `(0, 1\]`.
    fn layers(r: f64, v: f64, f: impl Fn(f64) -> f64, inverse: impl Fn(f64) -> f64) -> Ziggurat {
        let mut x = [0.0; ZIG_LAYERS + 1];
        x[0] = v / f(r);
        x[1] = r;
        for i in 1..ZIG_LAYERS - 1 {
            // f(x_(i+1)) = f(x_i) + V / x_i: layer i has area V.
            x[i + 1] = inverse(f(x[i]) + v / x[i]);
        }
        // The top layer closes at 0 (R is chosen for that; the recurrence
        // would give 1 + 3e-15 inside the logarithm).
        x[ZIG_LAYERS] = 0.0;
        let mut fx = [0.0; ZIG_LAYERS + 1];
        for (fi, xi) in fx.iter_mut().zip(&x) {
            *fi = f(*xi);
        }
        Ziggurat { x, f: fx }
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
    pub(super) fn exponential() -> &'static Ziggurat {
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
        Self::layers(
            EXP_ZIG_R,
            Self::exponential_area(),
            |x| libm::exp(-x),
            |y| 0.0 - libm::log(y),
        )
    }
}

impl Ziggurat {
    /// One draw from these tables, whose density is `density`. Each try
    /// takes one `next_u64`: bits 0 to 7 pick the layer and bits 11 to 63
    /// the abscissa `x`; `signed` turns `x` (or the base layer's `tail`
    /// draw) and the try's bits into the draw (the normal takes its sign
    /// from bit 8).
    #[inline(always)]
    pub(super) fn sample<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        density: impl Fn(f64) -> f64,
        tail: impl Fn(&mut R) -> f64,
        signed: impl Fn(f64, u64) -> f64,
    ) -> f64 {
        loop {
            let bits = rng.next_u64();
            let i = (bits & 0xff) as usize;
            let x = ((bits >> 11) as f64 * TWO_POW_MINUS_53) * self.x[i];
            if x < self.x[i + 1] {
                // Under the layer above: certainly under the curve.
                return signed(x, bits);
            }
            if i == 0 {
                return signed(tail(rng), bits);
            }
            // The wedge: a uniform height within the layer against f(x).
            let y = self.f[i] + (self.f[i + 1] - self.f[i]) * closed_open01(rng);
            if y < density(x) {
                return signed(x, bits);
            }
        }
    }
}

/// The exponential's tail beyond `EXP_ZIG_R`: `R + Exp1` by inversion
/// (memorylessness), `R - ln U` with `U` on `(0, 1\]`.
#[cold]
pub(super) fn exp_tail<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    EXP_ZIG_R - libm::log(open_closed01(rng))
}

/// The tail of the normal beyond `ZIG_R`, by Marsaglia's 1964 method:
/// `a = -ln(U1) / R`, `b = -ln(U2)`, accept `R + a` when `2b >= a²`.
#[cold]
pub(super) fn normal_tail<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let a = 0.0 - libm::log(open_closed01(rng)) / ZIG_R;
        let b = 0.0 - libm::log(open_closed01(rng));
        if b + b >= a * a {
            return ZIG_R + a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::tests::{N, ks_one_sample, rng};
    use crate::samplers::{Exp1, StandardNormal};
    use rand_pcg::Pcg64Mcg;

    /// Checks that `in_tail` holds for about `p` of 2 million draws: within 5
    /// standard errors of the binomial expectation.
    fn check_tail_share(seed: u64, p: f64, mut in_tail: impl FnMut(&mut Pcg64Mcg) -> bool) {
        let n = 2_000_000;
        let mut r = rng(seed);
        let beyond = (0..n).filter(|_| in_tail(&mut r)).count() as f64;
        let expected = n as f64 * p;
        let se = libm::sqrt(n as f64 * p * (1.0 - p));
        assert!(
            (beyond - expected).abs() <= 5.0 * se,
            "{beyond} beyond R, expected {expected}"
        );
    }

    /// Checks `N` draws of a tail sampler against the CDF `cdf` of the
    /// distribution conditional on exceeding `edge`: every draw beyond the
    /// edge, and the one-sample KS statistic below its critical value at
    /// alpha = 0.001, 1.949 / sqrt(n) ≈ 0.0044 for 200 000 draws.
    fn check_tail_shape(
        what: &str,
        seed: u64,
        edge: f64,
        tail: fn(&mut Pcg64Mcg) -> f64,
        cdf: impl Fn(f64) -> f64,
    ) {
        let mut r = rng(seed);
        let xs: Vec<f64> = (0..N).map(|_| tail(&mut r)).collect();
        assert!(xs.iter().all(|&x| x >= edge));
        let d = ks_one_sample(xs, cdf);
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(N as f64);
        assert!(d < critical, "{what}: KS {d} >= {critical}");
    }

    /// Checks where 2 million draws of `draw` (which must be >= 0) fall among
    /// the layer edges of `z`: bin `i` (1..=255) is `[x_(i+1), x_i)`, bin 0
    /// is `[R, inf)`, each against its probability from `upper(x) = P(X >=
    /// x)`. Pearson's chi-square over the 256 bins, against its critical
    /// value for 255 degrees of freedom at alpha = 0.001 (about 331).
    fn check_layer_mass(
        seed: u64,
        z: &Ziggurat,
        mut draw: impl FnMut(&mut Pcg64Mcg) -> f64,
        upper: impl Fn(f64) -> f64,
    ) {
        let n = 2_000_000;
        let mut r = rng(seed);
        let mut counts = [0_u64; ZIG_LAYERS];
        for _ in 0..n {
            let x = draw(&mut r);
            counts[z.x[1..].partition_point(|&e| e > x)] += 1;
        }
        let chi2 = chi_square(&counts, |bin| {
            if bin == 0 {
                upper(z.x[1])
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

    /// Checks that every layer of `z` has area `v`, the base layer's
    /// rectangle of width x_0 exactly, and that the edges decrease.
    fn check_equal_areas(z: &Ziggurat, v: f64) {
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
    fn normal_tail_is_reached_and_correct() {
        // P(|Z| > R) = erfc(R / sqrt 2) ≈ 2.6e-4: the tail branch runs about
        // 520 times in 2 million draws.
        check_tail_share(73, libm::erfc(ZIG_R / SQRT_2), |r| {
            StandardNormal.sample(r).abs() > ZIG_R
        });
    }

    #[test]
    fn normal_tail_has_the_right_shape() {
        // The tail branch alone, against the normal's CDF conditional on
        // exceeding R, 1 - erfc(x / sqrt 2) / erfc(R / sqrt 2). (The
        // whole-normal tests cannot see the tail's shape: it holds 2.6e-4 of
        // the mass.)
        let q = libm::erfc(ZIG_R / SQRT_2);
        check_tail_shape("normal tail", 74, ZIG_R, normal_tail, |x| {
            1.0 - libm::erfc(x / SQRT_2) / q
        });
    }

    #[test]
    fn normal_mass_between_layer_edges() {
        // Where the Ziggurat's wedge test matters: |Z| between consecutive
        // layer edges x_(i+1) and x_i (and beyond R), 256 bins in all. A wrong
        // wedge test (accepting the whole rectangle, say) leaves the moments
        // and the CDF within their tolerances, since the wedges hold under 1%
        // of the mass, but puts up to tens of percent too much mass in the
        // bins near R. The smallest expected count is about 400.
        check_layer_mass(
            75,
            Ziggurat::get(),
            |r| StandardNormal.sample(r).abs(),
            |x| libm::erfc(x / SQRT_2), // P(|Z| >= x)
        );
    }

    #[test]
    fn ziggurat_layers_have_equal_areas() {
        check_equal_areas(Ziggurat::get(), Ziggurat::area());
    }

    #[test]
    fn exponential_tail_is_reached_and_correct() {
        // Only the tail branch returns draws beyond R (the layers return
        // x < x_1 = R), and P(X > R) = e^-R ≈ 4.5e-4: about 906 of 2 million
        // draws.
        check_tail_share(76, libm::exp(-EXP_ZIG_R), |r| Exp1.sample(r) > EXP_ZIG_R);
    }

    #[test]
    fn exponential_tail_has_the_right_shape() {
        // The tail branch alone, against the CDF conditional on exceeding R,
        // 1 - e^-(x - R) (the whole-distribution tests cannot see the tail's
        // shape: it holds 4.5e-4 of the mass).
        check_tail_shape("exponential tail", 77, EXP_ZIG_R, exp_tail, |x| {
            -libm::expm1(-(x - EXP_ZIG_R))
        });
    }

    #[test]
    fn exponential_mass_between_layer_edges() {
        // As `normal_mass_between_layer_edges`, for the exponential Ziggurat;
        // the wedges hold about 1.1% of the mass, so a wrong wedge test
        // barely moves the moments or the CDF but shows here. The smallest
        // expected count is about 900, beyond R; P(X >= x) = e^-x, which is
        // the tables' f at every edge (`exp_ziggurat_layers_have_equal_areas`).
        check_layer_mass(
            78,
            Ziggurat::exponential(),
            |r| Exp1.sample(r),
            |x| libm::exp(-x),
        );
    }

    #[test]
    fn exp_ziggurat_layers_have_equal_areas() {
        // Every layer, the top one included (x_256 = 0 is set, not
        // computed: a wrong R leaves it too big or too small), has area V;
        // the base layer's rectangle of width x_0 stands for R f(R) plus the
        // tail's area f(R).
        let z = Ziggurat::exponential();
        check_equal_areas(z, Ziggurat::exponential_area());
        assert_eq!(z.x[1], EXP_ZIG_R);
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
}
