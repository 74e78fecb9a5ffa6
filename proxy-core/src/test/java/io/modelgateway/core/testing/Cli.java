package io.modelgateway.core.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a real command-line client (curl, openssl, h2load) to its end, bounded in time, and returns what it printed. */
public final class Cli {
    /** Exit status, stdout, stderr. */
    public record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }

    private Cli() {
    }

    public static Result run(List<String> command, String stdin, long timeoutSeconds) throws IOException,
            InterruptedException {
        Process p = new ProcessBuilder(command).start();
        try {
            if (stdin != null) {
                p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            p.getOutputStream().close();
            var out = java.util.concurrent.CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            var err = java.util.concurrent.CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(command.get(0) + " did not end within " + timeoutSeconds + " s");
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } finally {
            p.destroyForcibly();
        }
    }

    private static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
