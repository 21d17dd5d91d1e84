"""Generic English texts that calibrate int8 post-training quantisation (openvino int8, backend_build.py).

Written for this project, not taken from any dataset or from the user's collection: an exported copy is keyed by the
source weights' content hash, so what it is built from must be the same on every machine. The set mixes short
questions, single sentences and technical paragraphs (up to about 250 tokens when joined), so the ranges of
the activations cover what retrieval encodes: queries and documents of many lengths. `calibration_texts()` is the
set; its hash (identity.calibration_hash) is part of an exported copy's name and its results' fingerprint.
"""

from __future__ import annotations

QUESTIONS = (
    "What causes the seasons on Earth?",
    "How do vaccines train the immune system?",
    "Is coffee bad for your heart?",
    "Why is the sky blue?",
    "how to reset a forgotten router password",
    "What is the difference between a virus and a bacterium?",
    "Does regular exercise lower blood pressure in older adults?",
    "How long does it take for concrete to cure?",
    "Which programming language should I learn first?",
    "What are the symptoms of vitamin D deficiency?",
    "Can antibiotics treat the common cold?",
    "How does a mortgage interest rate affect monthly payments?",
    "when was the printing press invented",
    "What does a p-value actually measure?",
    "How do I configure a firewall rule to block a port?",
    "Are electric cars cheaper to maintain than petrol cars?",
    "What is the role of mitochondria in a cell?",
    "Why do leaves change colour in autumn?",
    "How is inflation measured by central banks?",
    "Does sleep deprivation affect memory consolidation?",
    "What is a hash table and when should I use one?",
    "How do tides work?",
    "error 404 after deploying the new release",
    "Is it safe to take ibuprofen with paracetamol?",
    "What does the expense policy say about travel meals?",
    "How many days of annual leave do new employees get?",
    "Which gene mutations increase the risk of breast cancer?",
    "How does gradient descent find a minimum?",
    "What is the boiling point of water at high altitude?",
    "How do I rotate an API key without downtime?",
    "Do statins reduce the risk of stroke?",
    "What is the capital of Australia?",
    "How are solar panels recycled at the end of their life?",
    "Why does my laptop battery drain so quickly?",
    "What is the treatment for type 2 diabetes?",
    "How do noise-cancelling headphones work?",
    "TLS certificate expired on the staging server",
    "Can smoking during pregnancy affect the baby's birth weight?",
    "What are the main causes of soil erosion?",
    "How should I store fresh herbs?",
    "What is the half-life of caffeine?",
    "Who approves purchase orders above the budget limit?",
    "How does a transformer language model encode a sentence?",
    "Does air pollution increase the incidence of asthma in children?",
    "What happens during a database failover?",
    "Is intermittent fasting effective for weight loss?",
    "vpn",
    "refund",
)

SENTENCES = (
    "The meeting has been moved to Thursday afternoon because the projector in the main room is broken.",
    "Insulin resistance develops when muscle, fat and liver cells respond poorly to insulin.",
    "Please restart the service after changing the configuration file.",
    "The river flooded the lower part of the village twice in the last decade.",
    "Our quarterly revenue grew by eight percent, driven mainly by subscriptions in Europe.",
    "Mutations in the p53 tumour suppressor gene are found in about half of all human cancers.",
    "The library opens at nine in the morning and closes at six on weekdays.",
    "A randomised controlled trial assigns participants to groups by chance to avoid selection bias.",
    "Backups are taken every night and kept for thirty days in a separate region.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "Chronic inflammation has been linked to atherosclerosis, arthritis and some cancers.",
    "The new employee handbook explains how to request parental leave.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "He forgot his umbrella, so he waited under the bridge until the rain stopped.",
    "The cache is invalidated whenever the upstream record changes.",
    "Patients receiving the higher dose reported more frequent headaches and nausea.",
    "The committee rejected the proposal because the cost estimates were incomplete.",
    "Memory T cells persist for years after an infection and respond quickly when the pathogen returns.",
    "Use a strong, unique password for every account and enable two-factor authentication.",
    "The bridge was closed for repairs after inspectors found cracks in two of its supports.",
    "Deep learning models often need large amounts of labelled data to generalise well.",
    "The contract may be terminated by either party with ninety days' written notice.",
    "Elevated levels of LDL cholesterol are a major risk factor for coronary heart disease.",
    "The train to the airport leaves every fifteen minutes from platform four.",
    "Our support team answers tickets within one business day.",
    "Glaciers in the Alps have lost more than half of their volume since 1900.",
    "The function returns None when the key is missing instead of raising an error.",
    "Children who read for pleasure tend to have a larger vocabulary by the age of ten.",
    "All invoices must include the purchase order number and the cost centre.",
    "The enzyme is inhibited by high concentrations of its own product.",
    "The museum's new wing displays textiles from West Africa and South Asia.",
    "Latency increased sharply after the load balancer was reconfigured.",
    "Obesity in midlife is associated with a higher risk of dementia later in life.",
    "The garden needs watering twice a week during the summer months.",
    "The study found no significant difference between the two treatment arms.",
    "Employees working remotely must use the company VPN to reach internal systems.",
    "Bees communicate the direction of food sources through a waggle dance.",
    "The index is rebuilt from scratch whenever the embedding model changes.",
    "Vitamin C is required for the synthesis of collagen in connective tissue.",
    "The hotel offers free breakfast and late checkout for members.",
    "Antibiotic resistance spreads when bacteria exchange plasmids carrying resistance genes.",
    "The report is due at the end of the month and must be reviewed by legal.",
    "Sea levels rise as ocean water warms and expands and as land ice melts.",
    "Run the migration script before deploying the new version of the application.",
    "Regular physical activity improves insulin sensitivity and reduces visceral fat.",
    "The orchestra will perform works by Brahms and Sibelius on Saturday evening.",
    "A stack trace shows the sequence of function calls that led to the exception.",
    "Smoking cessation reduces the risk of lung cancer within ten years.",
    "The warehouse ships orders placed before noon on the same day.",
    "Neurons in the hippocampus are essential for forming new episodic memories.",
    "The search results are ranked by the cosine similarity of their embeddings to the query.",
    "Wind turbines generate less electricity when wind speeds are very low or very high.",
    "The clinic is closed on public holidays; urgent cases should call the emergency line.",
    "Randomisation was stratified by age, sex and baseline disease severity.",
    "The old server will be decommissioned once all data has been migrated.",
    "Malaria is transmitted by the bite of infected female Anopheles mosquitoes.",
    "She painted the kitchen a pale yellow and replaced the cabinet handles.",
    "Throughput doubled after the batch size was increased and the tokeniser was moved out of the loop.",
    "Gut microbiota composition differs between lean and obese individuals.",
    "The policy covers accidental damage but not normal wear and tear.",
)

PARAGRAPHS = (
    "Type 2 diabetes is a chronic condition in which the body does not use insulin effectively. Over time, high "
    "blood glucose damages blood vessels and nerves, increasing the risk of heart disease, kidney failure and vision "
    "loss. Treatment usually begins with changes in diet and physical activity, followed by oral medication such as "
    "metformin, and insulin injections when other measures are not enough.",
    "To set up the development environment, clone the repository, create a virtual environment and install the "
    "package in editable mode together with its test dependencies. The test suite runs without network access; "
    "tests that need a real model on a real dataset are marked slow and are skipped by default. Continuous "
    "integration runs all of them on a clean machine before a change is merged.",
    "The city council approved a plan to expand the bicycle network by forty kilometres over the next five years. "
    "The new lanes will be separated from car traffic by kerbs or planters, and several junctions will be redesigned "
    "to give cyclists their own signals. Critics argue that the plan removes too many parking spaces, while "
    "supporters point to falling accident rates in neighbourhoods where similar lanes were built.",
    "In a cohort of 12,000 adults followed for a median of eight years, higher consumption of ultra-processed food was "
    "associated with a greater risk of cardiovascular events after adjustment for age, sex, smoking, physical activity "
    "and socioeconomic status. The association persisted in sensitivity analyses excluding participants with "
    "diabetes at baseline, although residual confounding cannot be ruled out in an observational design.",
    "Embedding models map a piece of text to a fixed-length vector so that texts with similar meaning lie close to "
    "each other. A retrieval system encodes every document once, stores the vectors in an index and, at query time, "
    "encodes the query and returns the documents whose vectors are most similar. The quality of the ranking is "
    "usually measured with metrics such as nDCG at ten or recall at one hundred on a set of labelled queries.",
    "Employees may carry over up to five days of unused annual leave into the next calendar year. Carried-over days "
    "must be taken before the end of March, after which they expire. Requests for leave longer than two consecutive "
    "weeks should be submitted at least one month in advance and approved by the line manager and the team lead.",
    "The immune response to a vaccine begins when antigen-presenting cells take up the antigen and display fragments "
    "of it to helper T cells in the lymph nodes. Activated helper cells stimulate B cells to produce antibodies and "
    "support the expansion of cytotoxic T cells. A fraction of these cells become long-lived memory cells, which "
    "allow a faster and stronger response when the real pathogen is encountered.",
    "When the primary database fails, the replica is promoted and the application reconnects through the same "
    "address. Writes made in the last few seconds before the failure may be lost if replication was asynchronous. "
    "After the incident, the old primary must be rebuilt from a fresh copy of the new primary before it can rejoin "
    "the cluster as a replica; it must never be started with its old data.",
    "Coral reefs cover less than one percent of the ocean floor but support about a quarter of all marine species. "
    "Rising sea temperatures cause corals to expel the symbiotic algae that provide them with food and colour, a "
    "process known as bleaching. If temperatures return to normal quickly, the corals can recover; prolonged heat "
    "stress, however, leads to widespread mortality and the collapse of reef ecosystems.",
    "The quantised model stores its weights as eight-bit integers with one scale per output channel, and its "
    "activations are quantised with scales estimated from a calibration set. Matrix multiplications then run on "
    "integer units, which on modern CPUs process four times as many values per instruction as single-precision "
    "floating point. The accuracy cost depends on how well the calibration set covers the activations seen in use.",
    "Sleep plays a central role in memory consolidation. During slow-wave sleep, recently acquired information is "
    "replayed in the hippocampus and gradually transferred to the neocortex for long-term storage. Studies in which "
    "participants were deprived of sleep after learning a task show impaired recall the next day, even when they "
    "were allowed to sleep normally on the following nights.",
    "Before submitting an expense claim, attach a scanned copy of every receipt and indicate the project code. Meals "
    "during business travel are reimbursed up to the daily limit for the destination country; alcohol is not "
    "reimbursed. Claims submitted more than sixty days after the expense was incurred require the approval of the "
    "finance director.",
    "Antimicrobial resistance arises when bacteria, viruses, fungi and parasites change over time and no longer "
    "respond to medicines. Overuse of antibiotics in human medicine and agriculture accelerates this process. "
    "Infections caused by resistant organisms are harder to treat, require longer hospital stays and more expensive "
    "drugs, and are associated with higher mortality, particularly in low- and middle-income countries.",
    "The release process has three stages. First, a release branch is cut and the version number is bumped. Second, "
    "the full test suite and the benchmarks run on the branch, and any regression beyond the agreed tolerance blocks "
    "the release. Third, the artefacts are built, signed and uploaded, and the changelog is published together with "
    "the measured figures so that users can see what changed and by how much.",
    "Mediterranean diets rich in olive oil, vegetables, legumes and fish have been associated with lower rates of "
    "heart disease in several large studies. A randomised trial in Spain found that participants assigned to a "
    "Mediterranean diet supplemented with extra-virgin olive oil or nuts had fewer major cardiovascular events than "
    "those advised to follow a low-fat diet, although the trial was later re-analysed because of irregularities in "
    "randomisation at some sites.",
    "The novel opens in a small fishing town on the northern coast, where the narrator returns after twenty years "
    "abroad to settle the affairs of her late father. As she sorts through his letters and notebooks, she discovers "
    "that the modest harbour master she remembers had led a second life as a translator of banned poetry, and that "
    "several of her neighbours had known and protected his secret for decades.",
    "Gene expression is regulated at several levels: chromatin accessibility determines whether transcription "
    "factors can bind to promoters and enhancers, RNA processing and stability control how much messenger RNA is "
    "available, and translation and protein degradation set the final amount of protein. Epigenetic marks such as "
    "DNA methylation and histone modifications can be inherited through cell division and change in response to "
    "the environment.",
    "If the application returns a timeout error, first check whether the upstream service is reachable from the "
    "host by running a health check against its internal address. If the health check succeeds, inspect the "
    "connection pool metrics: an exhausted pool usually means that connections are not released after an exception. "
    "Restarting the service clears the pool but does not fix the cause, so file a ticket with the stack trace.",
    "Climate models project that, without substantial reductions in greenhouse gas emissions, global mean surface "
    "temperature will rise by between two and four degrees Celsius by the end of the century relative to "
    "pre-industrial levels. The consequences include more frequent heatwaves, changes in precipitation patterns, "
    "sea level rise and increased risk to food and water security in many regions.",
    "Hypertension often has no symptoms, which is why it is sometimes called a silent killer. Blood pressure should "
    "be measured regularly, especially in adults over forty and in people with diabetes or kidney disease. Lifestyle "
    "measures, such as reducing salt intake, limiting alcohol, losing weight and exercising regularly, can lower "
    "blood pressure by several millimetres of mercury, and medication is added when these are not enough.",
    "The warranty covers manufacturing defects for two years from the date of purchase. It does not cover damage "
    "caused by accidents, misuse, unauthorised repairs or normal wear. To make a claim, contact customer service "
    "with the order number and a description of the fault; a replacement or refund is issued once the returned "
    "product has been inspected.",
    "Transformers process a sequence of tokens with layers of self-attention and feed-forward networks. In each "
    "attention layer, every token computes a weighted average of the representations of all other tokens, with "
    "weights derived from the similarity of learned query and key projections. Stacking several such layers lets "
    "the model build contextual representations in which the meaning of a word depends on the words around it.",
    "Chronic kidney disease is defined by a reduced glomerular filtration rate or markers of kidney damage for at "
    "least three months. Its most common causes are diabetes and high blood pressure. Early stages are managed by "
    "controlling these conditions and avoiding drugs that harm the kidneys; advanced disease may require dialysis "
    "or a transplant.",
    "Our onboarding programme lasts four weeks. In the first week, new colleagues meet their mentor, set up their "
    "accounts and read the architecture overview. In the second and third weeks, they pair with experienced "
    "engineers on small tasks and attend the weekly design review. In the fourth week, they take on their first "
    "independent piece of work and present it to the team.",
)

#: formatting residue that extracted documents carry (tables of contents with dot leaders, number tables, code,
#: links, bullets): runs of one repeated token drive activations to ranges prose never reaches
NOISY = (
    "Contents. INTRODUCTION . . . . . . . . . . . . . . . . 1 BACKGROUND . . . . . . . . . . . . . . 4 METHODS . . . "
    ". . . . . . . . . . . 9 RESULTS . . . . . . . . . . . . . . . 15 DISCUSSION . . . . . . . . . . . . 22",
    "Table of contents • • Overview ........ 3 • Installation ........ 5 • Configuration .... . . . 8 • "
    "Troubleshooting . . . .. . . ..... 12 • Appendix A . . . . . . . . . . . . 19",
    "Table 2. Baseline characteristics | n = 412 | 38.2 ± 11.4 | 57 % | 24.9 (22.1-28.3) | 0.43 | 1.12 | < 0.001 | "
    "0.87 | 12 / 45 | 3.1 ± 0.8 | - | - | 0.02",
    "def load(path):\n    with open(path) as f:\n        return [json.loads(line) for line in f if line.strip()]\n\n"
    "for row in load('data.jsonl'):\n    print(row['id'], row.get('text', '')[:80])",
    "See https://example.org/docs/v2/setup#install, https://example.org/docs/v2/faq?lang=en and "
    "ftp://files.example.net/pub/2024/archive_001.tar.gz for the full list.",
    "- item one\n- item two\n- item three\n  * sub-item a\n  * sub-item b\n- item four (see above)\n- ...",
    "ERROR 2024-03-11T09:42:17Z [worker-3] timeout after 30000 ms; retry 1/5 ... retry 2/5 ... retry 3/5 ... "
    "retry 4/5 ... retry 5/5 ... giving up (code=ETIMEDOUT, host=10.0.4.17:5432)",
    "A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9 ! ? ; : - - - * * * = = = # # #",
    "CHAPTER 1 . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . ."
    " . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . .",
)


def calibration_texts() -> list[str]:
    """The calibration set (187 texts, 4 to 247 MiniLM tokens): every question, sentence, paragraph and piece of
    formatting residue, each second paragraph joined with the next, every fourth with the next two (the long end),
    runs of three sentences and every third paragraph followed by residue."""
    texts = [*QUESTIONS, *SENTENCES, *PARAGRAPHS, *NOISY]
    texts += [PARAGRAPHS[i] + " " + PARAGRAPHS[(i + 1) % len(PARAGRAPHS)] for i in range(0, len(PARAGRAPHS), 2)]
    texts += [" ".join(PARAGRAPHS[i:i + 3]) for i in range(1, len(PARAGRAPHS) - 2, 4)]
    texts += [" ".join(SENTENCES[i:i + 3]) for i in range(0, len(SENTENCES) - 2, 3)]
    texts += [PARAGRAPHS[i] + " " + NOISY[i % len(NOISY)] for i in range(1, len(PARAGRAPHS), 3)]  # residue after prose
    return texts

