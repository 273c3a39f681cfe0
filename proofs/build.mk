# proofs/: machine-checked layout facts (prove_layouts.c, Z3 over bit-vectors).
#   make proofs     prove every fact (exit 0 when all hold)
# `make` builds the prover so `make test` runs it (tests/tensor/test_proofs.py proves
# every fact and refutes each over a deliberately wrong formula).

PROOF_BIN := $(TBIN)/prove_layouts

$(PROOF_BIN): $(OBJ)/proofs/prove_layouts.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lz3 $(LDLIBS)

ALL_TARGETS += $(PROOF_BIN)

.PHONY: proofs
proofs: $(PROOF_BIN)
	$(PROOF_BIN)
