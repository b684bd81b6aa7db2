# Experiment 6 (sgd): shuffled PLDP-SGD accuracy vs central eps, per accounting method.


# Per-run tables: each accounting method (and the local-only reference) x target eps, plus
# the non-private run.
SGD_RUNS = [
    f"results/sgd/runs/{m}/eps_{fmt_num(e)}.csv"
    for m in list(config["sgd"]["methods"])
    + [r for r in config["sgd"]["references"] if r != "nonprivate"]
    for e in config["sgd"]["target_eps"]
] + (
    ["results/sgd/runs/nonprivate/eps_inf.csv"]
    if "nonprivate" in config["sgd"]["references"]
    else []
)


rule train_sgd:
    input:
        # the user's MNIST file or directory (checked to exist); nothing for digits
        unpack(
            lambda wc: (
                {"mnist": config["sgd"]["mnist_path"]}
                if config["sgd"]["dataset"] == "mnist"
                else {}
            )
        ),
    output:
        table="results/sgd/runs/{method}/eps_{eps}.csv",
    log:
        "logs/train_sgd/{method}/eps_{eps}.log",
    benchmark:
        "benchmarks/output/train_sgd/{method}/eps_{eps}.tsv"
    wildcard_constraints:
        method="[a-z][a-z0-9_]*",
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc: 2000 if config["sgd"]["dataset"] == "digits" else 12000,
        runtime=lambda wc: 30 if config["sgd"]["dataset"] == "digits" else 600,
    params:
        method=lambda wc: wc.method,
        target_eps=lambda wc: None if wc.eps == "inf" else float(wc.eps),
        sgd=config["sgd"],
        profiles=config["profiles"],
        seed=config["seed"],
        threads=1,
    script:
        "../scripts/train_sgd.py"


rule collect_sgd:
    input:
        tables=SGD_RUNS,
    output:
        table="results/sgd/sgd.csv",
    log:
        "logs/collect_sgd.log",
    benchmark:
        "benchmarks/output/collect_sgd.tsv"
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        kind="sgd",
    script:
        "../scripts/concat_tables.py"


rule plot_sgd:
    input:
        table="results/sgd/sgd.csv",
    output:
        png=report(
            "results/figures/sgd.png",
            caption="../report/sgd.rst",
            category="Algorithms",
        ),
        pdf="results/figures/sgd.pdf",
    log:
        "logs/plot_sgd.log",
    benchmark:
        "benchmarks/output/plot_sgd.tsv"
    conda:
        "../envs/shuffledp.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/plot_sgd.py"
