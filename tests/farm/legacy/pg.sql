--
-- PostgreSQL database dump
--

\restrict NHFwlBWSnp6C97gtiBIcFl4RTZjl7ceWverTEzddi6JP7HnUbMBFFUaog9zZ0E0

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: agents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agents (
    id bigint NOT NULL,
    name text NOT NULL,
    keyid text NOT NULL,
    public_pem text NOT NULL,
    caps text NOT NULL,
    token_hash text,
    revoked integer DEFAULT 0 NOT NULL,
    enrolled_at double precision,
    last_seen double precision
);


--
-- Name: agents_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.agents_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: agents_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.agents_id_seq OWNED BY public.agents.id;


--
-- Name: blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blobs (
    sha256 text NOT NULL,
    size bigint NOT NULL,
    added_at double precision
);


--
-- Name: case_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.case_history (
    case_path text NOT NULL,
    run_id bigint NOT NULL,
    row_json text NOT NULL
);


--
-- Name: coordinators; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.coordinators (
    id text NOT NULL,
    seen double precision,
    lock_key bigint
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    id bigint NOT NULL,
    job_id bigint,
    agent_id bigint,
    kind text NOT NULL,
    at double precision
);


--
-- Name: events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: events_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.events_id_seq OWNED BY public.events.id;


--
-- Name: farm; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.farm (
    one integer NOT NULL,
    id text NOT NULL,
    salt text NOT NULL,
    tokens text NOT NULL,
    created_at double precision
);


--
-- Name: filings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.filings (
    evidence text NOT NULL,
    coordinator text NOT NULL,
    job_id bigint NOT NULL,
    at double precision
);


--
-- Name: jobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.jobs (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    cell_id text NOT NULL,
    cell text NOT NULL,
    state text NOT NULL,
    agent_id bigint,
    attempt integer DEFAULT 0 NOT NULL,
    lost integer DEFAULT 0 NOT NULL,
    lease_expires double precision,
    progress text,
    bundle_sha text,
    evidence text,
    predicate text,
    failure text,
    updated_at double precision
);


--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: jobs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.jobs_id_seq OWNED BY public.jobs.id;


--
-- Name: reports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reports (
    run_id bigint NOT NULL,
    summary text NOT NULL,
    report text NOT NULL,
    at double precision
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    id bigint NOT NULL,
    source_sha text NOT NULL,
    matrix text NOT NULL,
    cases text NOT NULL,
    created_at double precision,
    cancelled integer DEFAULT 0 NOT NULL
);


--
-- Name: runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: runs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.runs_id_seq OWNED BY public.runs.id;


--
-- Name: unsettled; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.unsettled (
    seq bigint NOT NULL,
    job_id bigint NOT NULL,
    evidence text NOT NULL,
    files text NOT NULL,
    coordinator text DEFAULT ''::text NOT NULL
);


--
-- Name: unsettled_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.unsettled_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: unsettled_seq_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.unsettled_seq_seq OWNED BY public.unsettled.seq;


--
-- Name: agents id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents ALTER COLUMN id SET DEFAULT nextval('public.agents_id_seq'::regclass);


--
-- Name: events id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events ALTER COLUMN id SET DEFAULT nextval('public.events_id_seq'::regclass);


--
-- Name: jobs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs ALTER COLUMN id SET DEFAULT nextval('public.jobs_id_seq'::regclass);


--
-- Name: runs id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs ALTER COLUMN id SET DEFAULT nextval('public.runs_id_seq'::regclass);


--
-- Name: unsettled seq; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unsettled ALTER COLUMN seq SET DEFAULT nextval('public.unsettled_seq_seq'::regclass);


--
-- Data for Name: agents; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.agents (id, name, keyid, public_pem, caps, token_hash, revoked, enrolled_at, last_seen) FROM stdin;
1	old-box	453723ba7a11a1ba976154ef07434d0711c63ea0ef059c784bb8e8e73f100a5e	-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAho1Yf/s/qFNIM4RZh523xL9rLPuqDf9t2nqalvmdkEg=\n-----END PUBLIC KEY-----\n	{"cairn":"0.1.0","cairn_emulate_flag":true,"compilers":{"gcc":{"version":"12.2.0","sanitizers":[]},"clang":{"version":"14.0.6","sanitizers":[]}},"gpus":[],"nvcc":"13.0","cpu":"Intel(R) Xeon(R) Processor","cores":2,"os":"Linux 6.18.44-fc-v669 x86_64","labels":["x86_64"]}	56125abf78111b40c2f235eec073c83d95c84c37b6f9438cba8dc882f4948e51	0	1796149870.5975037	1796149870.5975037
2	late	63ad63fd3c8d2c6b53a61997467d5c7ecc2a84bb55878693c280b76ef1630b16	-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAPwJTROw4qkb8CXsJ5bebHkMNlcr/0NMamivOx/+q2/I=\n-----END PUBLIC KEY-----\n	{"compilers":{"gcc":{"version":"t","sanitizers":[]},"clang":{"version":"t","sanitizers":[]}},"gpus":[],"labels":[]}	0bb2f387d427ed590cb6f6ad1ce76d4280e23f62ae6a25c344c9866ec2a58ba2	0	1796149874.001478	1796149874.001478
\.


--
-- Data for Name: blobs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.blobs (sha256, size, added_at) FROM stdin;
7b2c145e13e3dda87243f3061a76972dc304e88242258c36d1ac476bcb95b32a	1005	1796149870.5229733
05a6c0b772ec27c99421bceb3ba7a6ac69bdca5d9cc5268154a00f9b8dc0e7cf	287	1796149873.9719627
\.


--
-- Data for Name: case_history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.case_history (case_path, run_id, row_json) FROM stdin;
examples/fixed.cairn	1	{"case":"examples/fixed.cairn","verdict":"identical","cells":{"old-box/gcc-none-emulated":{"value":"51a4ef6cf4c8"},"old-box/clang-none-emulated":{"value":"51a4ef6cf4c8"}}}
examples/plain.cairn	1	{"case":"examples/plain.cairn","verdict":"identical","cells":{"old-box/gcc-none-emulated":{"value":"e0ad55516f21"},"old-box/clang-none-emulated":{"value":"e0ad55516f21"}}}
examples/unordered.cairn	1	{"case":"examples/unordered.cairn","verdict":"within-bound","error_over_bound":0.25,"cells":{"old-box/gcc-none-emulated":{"value":"b4b74823f9f3"},"old-box/clang-none-emulated":{"value":"c620065ac3ab"}}}
\.


--
-- Data for Name: coordinators; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.coordinators (id, seen, lock_key) FROM stdin;
vm-26201	1796149873.8883538	474098678
\.


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.events (id, job_id, agent_id, kind, at) FROM stdin;
\.


--
-- Data for Name: farm; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.farm (one, id, salt, tokens, created_at) FROM stdin;
1	da1d848e9b5be9c520e106180c3d9d44	81fb775e930b51dc6e1c6ddcb920426f	6bb77e542d4b6fbf0d458cc9f01ab40a90db37f0ccb3a2d138d7c5c7be8ebaab	1796149870.4337664
\.


--
-- Data for Name: filings; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.filings (evidence, coordinator, job_id, at) FROM stdin;
\.


--
-- Data for Name: jobs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.jobs (id, run_id, cell_id, cell, state, agent_id, attempt, lost, lease_expires, progress, bundle_sha, evidence, predicate, failure, updated_at) FROM stdin;
1	1	gcc-none-emulated	{"compiler":"gcc","sanitizer":"none","mode":"emulated","repeat":0,"labels":[]}	done	1	1	0	\N	filed	d23b548d0ef2719bef7f3b802526dbf2663b415ebdb07f9add9fcdbe4cd14d6c	evidence/0.1.0/1/old-box/gcc-none-emulated	{"run":1,"job":1,"attempt":1,"cairn_version":"0.1.0","source":{"sha256":"7b2c145e13e3dda87243f3061a76972dc304e88242258c36d1ac476bcb95b32a"},"farm":"da1d848e9b5be9c520e106180c3d9d44","machine":{"name":"old-box","cpu":"Intel(R) Xeon(R) Processor","cores":2,"os":"Linux 6.18.44-fc-v669 x86_64","gpus":[],"nvcc":"13.0","labels":["x86_64"]},"cell":{"compiler":"gcc","sanitizer":"none","mode":"emulated","id":"gcc-none-emulated","compiler_version":"12.2.0"},"started_at":1796149870.6027594,"cases":[{"case":"examples/fixed.cairn","build_status":0,"receipt":"examples/fixed.cairn/receipt.json","unordered":false,"observations":[{"name":"total","type":"f64","count":3,"sha256":"8d438bb03873106b88ab247e9c515919710f2a088f86766ab595c9824c4344c0"},{"name":"count","type":"f64","count":1,"sha256":"161f4c0b1a18a0501127332c387e782b5acc10c6c7a9f7e494c1e3394c49bad5"}],"exit_status":0,"fixed":[],"bounds":[],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":61.632394790649414},{"case":"examples/plain.cairn","build_status":0,"receipt":"examples/plain.cairn/receipt.json","unordered":false,"observations":[{"name":"x","type":"f64","count":1,"sha256":"e726a50d216e6d71d7c53aabd23ab5e0d4677c3ef1f41fc35410143ebe6381c1"}],"exit_status":0,"fixed":[],"bounds":[],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":54.317474365234375},{"case":"examples/unordered.cairn","build_status":0,"receipt":"examples/unordered.cairn/receipt.json","unordered":true,"observations":[{"name":"acc","type":"f64","count":1,"sha256":"6c3c396ed6b5c36dcae172271f462051b1266b851e92df3deea8ac65478fd712"}],"exit_status":0,"fixed":[],"bounds":[{"bound":"acc","ratio":0.25,"ok":true,"promise":"the fake contract's bound","observation":"acc"}],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":56.112289428710938}],"passedTests":["examples/fixed.cairn","examples/plain.cairn","examples/unordered.cairn"],"warnedTests":[],"failedTests":[],"configuration":[{"name":"examples/fixed.cairn/receipt.json","digest":{"sha256":"a8bce55a57e6bd54edf81bfd7b5a4fb47921c072f2c2f6202b1109b47e65e7fd"}},{"name":"examples/plain.cairn/receipt.json","digest":{"sha256":"cff2fe0f181eab9879e15fae0453273e476f54b2adfa016838a47e4fe4e2b432"}},{"name":"examples/unordered.cairn/receipt.json","digest":{"sha256":"68254c2f21c8efc80f6d1e12cd0ebb5f701aedf3b517ca761d8166ec256a91de"}}],"result":"PASSED"}	\N	1796149870.782716
2	1	clang-none-emulated	{"compiler":"clang","sanitizer":"none","mode":"emulated","repeat":0,"labels":[]}	done	1	1	0	\N	filed	6ac24294b150bae15b9f75857c74d3d9ccd71cfc8a70de76f1a9517c3b3269b4	evidence/0.1.0/1/old-box/clang-none-emulated	{"run":1,"job":2,"attempt":1,"cairn_version":"0.1.0","source":{"sha256":"7b2c145e13e3dda87243f3061a76972dc304e88242258c36d1ac476bcb95b32a"},"farm":"da1d848e9b5be9c520e106180c3d9d44","machine":{"name":"old-box","cpu":"Intel(R) Xeon(R) Processor","cores":2,"os":"Linux 6.18.44-fc-v669 x86_64","gpus":[],"nvcc":"13.0","labels":["x86_64"]},"cell":{"compiler":"clang","sanitizer":"none","mode":"emulated","id":"clang-none-emulated","compiler_version":"14.0.6"},"started_at":1796149870.7871215,"cases":[{"case":"examples/fixed.cairn","build_status":0,"receipt":"examples/fixed.cairn/receipt.json","unordered":false,"observations":[{"name":"total","type":"f64","count":3,"sha256":"8d438bb03873106b88ab247e9c515919710f2a088f86766ab595c9824c4344c0"},{"name":"count","type":"f64","count":1,"sha256":"161f4c0b1a18a0501127332c387e782b5acc10c6c7a9f7e494c1e3394c49bad5"}],"exit_status":0,"fixed":[],"bounds":[],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":46.748161315917969},{"case":"examples/plain.cairn","build_status":0,"receipt":"examples/plain.cairn/receipt.json","unordered":false,"observations":[{"name":"x","type":"f64","count":1,"sha256":"e726a50d216e6d71d7c53aabd23ab5e0d4677c3ef1f41fc35410143ebe6381c1"}],"exit_status":0,"fixed":[],"bounds":[],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":41.245698928833},{"case":"examples/unordered.cairn","build_status":0,"receipt":"examples/unordered.cairn/receipt.json","unordered":true,"observations":[{"name":"acc","type":"f64","count":1,"sha256":"2d31d3f7f40aba7f4cb61cf48fefe0081142a3a2e94773a4fcf45d7fa41a471e"}],"exit_status":0,"fixed":[],"bounds":[{"bound":"acc","ratio":0.25,"ok":true,"promise":"the fake contract's bound","observation":"acc"}],"checks":[{"name":"build","ok":true},{"name":"exit_status_0","ok":true},{"name":"no_trap","ok":true},{"name":"raw_bits_match_digests","ok":true}],"duration_ms":45.7603931427002}],"passedTests":["examples/fixed.cairn","examples/plain.cairn","examples/unordered.cairn"],"warnedTests":[],"failedTests":[],"configuration":[{"name":"examples/fixed.cairn/receipt.json","digest":{"sha256":"2f675f6d8a3a91cff3de9f8b7fd0689e26304a21759f0376582347466b21f90c"}},{"name":"examples/plain.cairn/receipt.json","digest":{"sha256":"589339e1a87b9640d28f51de280c7923bdd27228035298f446118f7ad9373f9d"}},{"name":"examples/unordered.cairn/receipt.json","digest":{"sha256":"9f28625c0af080767d1723ff521192669342cd246262d6a36142977f3c95c0e7"}}],"result":"PASSED"}	\N	1796149870.927638
3	2	gcc-none-emulated	{"compiler":"gcc","sanitizer":"none","mode":"emulated","repeat":0,"labels":[]}	done	2	1	0	\N	filed	747eeaa1750b8606b35a94a940e9928ba266d8190c81149b0a33c1a17a297bf9	evidence/0.1.0/2/late/gcc-none-emulated	{"run":2,"job":3,"attempt":1,"source":{"sha256":"05a6c0b772ec27c99421bceb3ba7a6ac69bdca5d9cc5268154a00f9b8dc0e7cf"},"cairn_version":"0.1.0","machine":{"name":"late"},"cell":{"compiler":"gcc","sanitizer":"none","mode":"emulated","repeat":0,"labels":[],"id":"gcc-none-emulated"},"cases":[{"case":"examples/one.cairn","build_status":0,"exit_status":0,"unordered":false,"observations":[],"checks":[]}],"farm":"da1d848e9b5be9c520e106180c3d9d44"}	\N	1796149874.0184689
\.


--
-- Data for Name: reports; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.reports (run_id, summary, report, at) FROM stdin;
1	{"counts":{"identical":2,"within-bound":1,"no-evidence":0,"violates-contract":0,"differs-where-fixed":0},"ok":true}	{"columns":["old-box/gcc-none-emulated","old-box/clang-none-emulated"],"cases":[{"case":"examples/fixed.cairn","cells":{"old-box/gcc-none-emulated":{"value":"51a4ef6cf4c8","observations":2,"checks_ok":true,"unordered":false,"evidence":"evidence/0.1.0/1/old-box/gcc-none-emulated","bundle_sha256":"d23b548d0ef2719bef7f3b802526dbf2663b415ebdb07f9add9fcdbe4cd14d6c","receipt":"examples/fixed.cairn/receipt.json"},"old-box/clang-none-emulated":{"value":"51a4ef6cf4c8","observations":2,"checks_ok":true,"unordered":false,"evidence":"evidence/0.1.0/1/old-box/clang-none-emulated","bundle_sha256":"6ac24294b150bae15b9f75857c74d3d9ccd71cfc8a70de76f1a9517c3b3269b4","receipt":"examples/fixed.cairn/receipt.json"}},"observations":[{"observation":"total","verdict":"identical","promise":"fixed bits: the receipt lists only roundings the language fixes, so emulated and device runs give the same bits","digests":{"old-box/gcc-none-emulated":"8d438bb03873106b88ab247e9c515919710f2a088f86766ab595c9824c4344c0","old-box/clang-none-emulated":"8d438bb03873106b88ab247e9c515919710f2a088f86766ab595c9824c4344c0"}},{"observation":"count","verdict":"identical","promise":"fixed bits: the receipt lists only roundings the language fixes, so emulated and device runs give the same bits","digests":{"old-box/gcc-none-emulated":"161f4c0b1a18a0501127332c387e782b5acc10c6c7a9f7e494c1e3394c49bad5","old-box/clang-none-emulated":"161f4c0b1a18a0501127332c387e782b5acc10c6c7a9f7e494c1e3394c49bad5"}}],"verdict":"identical","promise":"fixed bits: the receipt lists only roundings the language fixes, so emulated and device runs give the same bits"},{"case":"examples/plain.cairn","cells":{"old-box/gcc-none-emulated":{"value":"e0ad55516f21","observations":1,"checks_ok":true,"unordered":false,"evidence":"evidence/0.1.0/1/old-box/gcc-none-emulated","bundle_sha256":"d23b548d0ef2719bef7f3b802526dbf2663b415ebdb07f9add9fcdbe4cd14d6c","receipt":"examples/plain.cairn/receipt.json"},"old-box/clang-none-emulated":{"value":"e0ad55516f21","observations":1,"checks_ok":true,"unordered":false,"evidence":"evidence/0.1.0/1/old-box/clang-none-emulated","bundle_sha256":"6ac24294b150bae15b9f75857c74d3d9ccd71cfc8a70de76f1a9517c3b3269b4","receipt":"examples/plain.cairn/receipt.json"}},"observations":[{"observation":"x","verdict":"identical","promise":"fixed bits: the receipt lists only roundings the language fixes, so emulated and device runs give the same bits","digests":{"old-box/gcc-none-emulated":"e726a50d216e6d71d7c53aabd23ab5e0d4677c3ef1f41fc35410143ebe6381c1","old-box/clang-none-emulated":"e726a50d216e6d71d7c53aabd23ab5e0d4677c3ef1f41fc35410143ebe6381c1"}}],"verdict":"identical","promise":"fixed bits: the receipt lists only roundings the language fixes, so emulated and device runs give the same bits"},{"case":"examples/unordered.cairn","cells":{"old-box/gcc-none-emulated":{"value":"b4b74823f9f3","observations":1,"checks_ok":true,"unordered":true,"evidence":"evidence/0.1.0/1/old-box/gcc-none-emulated","bundle_sha256":"d23b548d0ef2719bef7f3b802526dbf2663b415ebdb07f9add9fcdbe4cd14d6c","receipt":"examples/unordered.cairn/receipt.json"},"old-box/clang-none-emulated":{"value":"c620065ac3ab","observations":1,"checks_ok":true,"unordered":true,"evidence":"evidence/0.1.0/1/old-box/clang-none-emulated","bundle_sha256":"6ac24294b150bae15b9f75857c74d3d9ccd71cfc8a70de76f1a9517c3b3269b4","receipt":"examples/unordered.cairn/receipt.json"}},"observations":[{"observation":"acc","verdict":"within-bound","promise":"the fake contract's bound","error_over_bound":0.25,"digests":{"old-box/gcc-none-emulated":"6c3c396ed6b5c36dcae172271f462051b1266b851e92df3deea8ac65478fd712","old-box/clang-none-emulated":"2d31d3f7f40aba7f4cb61cf48fefe0081142a3a2e94773a4fcf45d7fa41a471e"}}],"verdict":"within-bound","promise":"the fake contract's bound","error_over_bound":0.25}],"counts":{"identical":2,"within-bound":1,"no-evidence":0,"violates-contract":0,"differs-where-fixed":0},"ok":true,"ratios":{"old-box/gcc-none-emulated":{"examples/unordered.cairn":0.25},"old-box/clang-none-emulated":{"examples/unordered.cairn":0.25}}}	1796149870.9309232
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.runs (id, source_sha, matrix, cases, created_at, cancelled) FROM stdin;
1	7b2c145e13e3dda87243f3061a76972dc304e88242258c36d1ac476bcb95b32a	{"compilers":["gcc","clang"]}	["examples/fixed.cairn","examples/plain.cairn","examples/unordered.cairn"]	1796149870.5243826	0
2	05a6c0b772ec27c99421bceb3ba7a6ac69bdca5d9cc5268154a00f9b8dc0e7cf	{"compilers":["gcc"]}	["examples/one.cairn"]	1796149873.9733691	0
\.


--
-- Data for Name: unsettled; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.unsettled (seq, job_id, evidence, files, coordinator) FROM stdin;
3	3	evidence/0.1.0/2/late/gcc-none-emulated	{"examples/slow.cairn/receipt.json":"eyJjYWlybiI6ICIwLjEuMCIsICJudW1lcmljcyI6IHsibWFpbiI6IFt7Im9wIjogInN1bSIsICJmcm9tIjogImY2NCIsICJ0byI6ICJmNjQiLCAicm91bmRpbmciOiAibmVhcmVzdC1ldmVuIiwgInN1bSI6ICJleGFjdCJ9XX19","examples/slow.cairn/run.log":"ZmlsZWQganVzdCBiZWZvcmUgdGhlIGtpbGwK","bundle.dsse.json":"eyJwYXlsb2FkVHlwZSI6ImFwcGxpY2F0aW9uL3ZuZC5pbi10b3RvK2pzb24iLCJwYXlsb2FkIjoiZXlKZmRIbHdaU0k2SUNKb2RIUndjem92TDJsdUxYUnZkRzh1YVc4dlUzUmhkR1Z0Wlc1MEwzWXhJaXdnSW5OMVltcGxZM1FpT2lCYmV5SnVZVzFsSWpvZ0ltVjRZVzF3YkdWekwzTnNiM2N1WTJGcGNtNHZjbVZqWldsd2RDNXFjMjl1SWl3Z0ltUnBaMlZ6ZENJNklIc2ljMmhoTWpVMklqb2dJbU15TmpObE5tTXlNbVV5WldRd09UVTJNMkZqTUdZME16VTBPRGRpT0dJek1HSXpOREpqTUdObU5HUTVOMlV5WmpKak5EQmlZamt3TVRSbE0yRm1NVElpZlgwc0lIc2libUZ0WlNJNklDSmxlR0Z0Y0d4bGN5OXpiRzkzTG1OaGFYSnVMM0oxYmk1c2IyY2lMQ0FpWkdsblpYTjBJam9nZXlKemFHRXlOVFlpT2lBaVlqWmtaamRtT1RCak1qWTFPV0ZrTXpKa09XVTFZVFJpTURCbU1qaG1aamhtTldVNVpHUmlZak5sWVRJNU5qUXlObVkyT0RJd01qaG1NelEwTm1JME1pSjlmVjBzSUNKd2NtVmthV05oZEdWVWVYQmxJam9nSW1oMGRIQnpPaTh2WTJGcGNtNHVaR1YyTDJWMmFXUmxibU5sTDNOMWFYUmxMV05sYkd3dmRqRWlMQ0FpY0hKbFpHbGpZWFJsSWpvZ2V5SnlkVzRpT2lBeUxDQWlhbTlpSWpvZ015d2dJbUYwZEdWdGNIUWlPaUF4TENBaWMyOTFjbU5sSWpvZ2V5SnphR0V5TlRZaU9pQWlNRFZoTm1Nd1lqYzNNbVZqTWpkak9UazBNakZpWTJWaU0ySmhOMkUyWVdNMk9XSmtZMkUxWkRsall6VXlOamd4TlRSaE1EQm1PV0k0WkdNd1pUZGpaaUo5TENBaVkyRnBjbTVmZG1WeWMybHZiaUk2SUNJd0xqRXVNQ0lzSUNKdFlXTm9hVzVsSWpvZ2V5SnVZVzFsSWpvZ0lteGhkR1VpZlN3Z0ltTmxiR3dpT2lCN0ltTnZiWEJwYkdWeUlqb2dJbWRqWXlJc0lDSnpZVzVwZEdsNlpYSWlPaUFpYm05dVpTSXNJQ0p0YjJSbElqb2dJbVZ0ZFd4aGRHVmtJaXdnSW5KbGNHVmhkQ0k2SURBc0lDSnNZV0psYkhNaU9pQmJYU3dnSW1sa0lqb2dJbWRqWXkxdWIyNWxMV1Z0ZFd4aGRHVmtJbjBzSUNKallYTmxjeUk2SUZ0N0ltTmhjMlVpT2lBaVpYaGhiWEJzWlhNdmIyNWxMbU5oYVhKdUlpd2dJbUoxYVd4a1gzTjBZWFIxY3lJNklEQXNJQ0psZUdsMFgzTjBZWFIxY3lJNklEQXNJQ0oxYm05eVpHVnlaV1FpT2lCbVlXeHpaU3dnSW05aWMyVnlkbUYwYVc5dWN5STZJRnRkTENBaVkyaGxZMnR6SWpvZ1cxMTlYU3dnSW1aaGNtMGlPaUFpWkdFeFpEZzBPR1U1WWpWaVpUbGpOVEl3WlRFd05qRTRNR016WkRsa05EUWlmWDA9Iiwic2lnbmF0dXJlcyI6W3sia2V5aWQiOiI2M2FkNjNmZDNjOGQyYzZiNTNhNjE5OTc0NjdkNWM3ZWNjMmE4NGJiNTU4Nzg2OTNjMjgwYjc2ZWYxNjMwYjE2Iiwic2lnIjoiOWVUZjNnWURxZnpMQU1iUGhvaENPZGZ3SmtweFAxMDNNNmJwQnU0UkFWVXI3RmE1SUdSNERCZEFVWnNOelVCR3k3eU93UVZTbjZIN3dnZ0xWc2FmREE9PSJ9XX0=","agent.pub.pem":"LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0KTUNvd0JRWURLMlZ3QXlFQVB3SlRST3c0cWtiOENYc0o1YmViSGtNTmxjci8wTk1hbWl2T3gvK3EyL0k9Ci0tLS0tRU5EIFBVQkxJQyBLRVktLS0tLQo="}	vm-26201
\.


--
-- Name: agents_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.agents_id_seq', 2, true);


--
-- Name: events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.events_id_seq', 1, false);


--
-- Name: jobs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.jobs_id_seq', 3, true);


--
-- Name: runs_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.runs_id_seq', 2, true);


--
-- Name: unsettled_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.unsettled_seq_seq', 3, true);


--
-- Name: agents agents_keyid_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_keyid_key UNIQUE (keyid);


--
-- Name: agents agents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_pkey PRIMARY KEY (id);


--
-- Name: agents agents_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_token_hash_key UNIQUE (token_hash);


--
-- Name: blobs blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blobs
    ADD CONSTRAINT blobs_pkey PRIMARY KEY (sha256);


--
-- Name: case_history case_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.case_history
    ADD CONSTRAINT case_history_pkey PRIMARY KEY (case_path, run_id);


--
-- Name: coordinators coordinators_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.coordinators
    ADD CONSTRAINT coordinators_pkey PRIMARY KEY (id);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);


--
-- Name: farm farm_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.farm
    ADD CONSTRAINT farm_pkey PRIMARY KEY (one);


--
-- Name: filings filings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.filings
    ADD CONSTRAINT filings_pkey PRIMARY KEY (evidence);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: jobs jobs_run_id_cell_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_run_id_cell_id_key UNIQUE (run_id, cell_id);


--
-- Name: reports reports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_pkey PRIMARY KEY (run_id);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: unsettled unsettled_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unsettled
    ADD CONSTRAINT unsettled_pkey PRIMARY KEY (seq);


--
-- Name: jobs_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX jobs_state ON public.jobs USING btree (state, id);


--
-- PostgreSQL database dump complete
--

\unrestrict NHFwlBWSnp6C97gtiBIcFl4RTZjl7ceWverTEzddi6JP7HnUbMBFFUaog9zZ0E0

