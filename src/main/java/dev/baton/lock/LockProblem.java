package dev.baton.lock;

import java.util.List;

/**
 * A refusal the caller must see as a problem response: bad input, or a script that said no
 * (LOCK_LOST, DUPLICATE_REQUEST, ...). Carries only what may be shown to the caller.
 */
public class LockProblem extends RuntimeException {

    private final ProblemCode code;
    private final String field;
    private final String state;
    private final Integer attempt;
    private final String resultJson;
    private final List<String> activeRequestIds;

    private LockProblem(ProblemCode code, String detail, String field, String state, Integer attempt, String resultJson,
            List<String> activeRequestIds) {
        super(detail, null, false, false);
        this.code = code;
        this.field = field;
        this.state = state;
        this.attempt = attempt;
        this.resultJson = resultJson;
        this.activeRequestIds = activeRequestIds;
    }

    public static LockProblem of(ProblemCode code, String detail) {
        return new LockProblem(code, detail, null, null, null, null, null);
    }

    public static LockProblem invalid(String field, String detail) {
        return new LockProblem(ProblemCode.INVALID_REQUEST, detail, field, null, null, null, null);
    }

    public static LockProblem tooLarge(String field, String detail) {
        return new LockProblem(ProblemCode.PAYLOAD_TOO_LARGE, detail, field, null, null, null, null);
    }

    /** A refusal about an existing request, telling where that request stands. */
    public static LockProblem aboutRequest(ProblemCode code, String detail, String state, Integer attempt, String resultJson) {
        return new LockProblem(code, detail, null, state, attempt, resultJson, null);
    }

    /** A complete that named other requests than the active batch: which ones are active. */
    public static LockProblem batchMismatch(String detail, List<String> activeRequestIds) {
        return new LockProblem(ProblemCode.BATCH_MISMATCH, detail, null, null, null, null, activeRequestIds);
    }

    public List<String> activeRequestIds() {
        return activeRequestIds;
    }

    public ProblemCode code() {
        return code;
    }

    public String field() {
        return field;
    }

    public String state() {
        return state;
    }

    public Integer attempt() {
        return attempt;
    }

    public String resultJson() {
        return resultJson;
    }
}
