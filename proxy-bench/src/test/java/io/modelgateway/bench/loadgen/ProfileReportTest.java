package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The profile report of scripts/bench profile, on a small hand-counted profile. */
class ProfileReportTest {
    private static final List<String> COLLAPSED = List.of(
            "java/lang/Thread.run;io/netty/channel/epoll/EpollIoHandler.run;writev;tcp_sendmsg_[k] 50",
            "java/lang/Thread.run;io/netty/handler/codec/http/HttpObjectDecoder.decode 20",
            "java/lang/Thread.run;io/modelgateway/core/auth/KeyAuthenticator.check 10",
            "java/lang/Thread.run;io/modelgateway/core/auth/KeyAuthenticator.bearer 5",
            "start_thread;CompileBroker::compiler_thread_loop;PhaseChaitin::Split 10",
            "start_thread;GCTaskThread::run;PSScavenge 5");

    @Test
    void summarize_sharesByKindOfCode_andTheHottestUserFramesAndPackages() {
        String s = ProfileReport.summarize(COLLAPSED);

        assertThat(s).contains("100 samples: kernel 50.0 %, JIT compiler 10.0 %, GC and VM threads 5.0 %, user code 35.0 %");
        assertThat(s).contains("| 20.00 | `io/netty/handler/codec/http/HttpObjectDecoder.decode` |");
        assertThat(s).contains("| 15.00 | `io.modelgateway.core.auth` |");
        assertThat(s.indexOf("HttpObjectDecoder.decode")).isLessThan(s.indexOf("KeyAuthenticator.check"));
    }

    @Test
    void summarize_framesWithTypeSuffixes_namedWithout_andC1OrInterpretedCountedApart() {
        String s = ProfileReport.summarize(List.of(
                "java/lang/Thread.run_[j];io/netty/channel/epoll/EpollIoHandler.run_[j];writev;tcp_sendmsg_[k] 40",
                "java/lang/Thread.run_[j];io/modelgateway/core/answer/AnswerWriter.finish_[1] 30",
                "java/lang/Thread.run_[j];io/modelgateway/core/answer/AnswerWriter.finish_[j] 10",
                "java/lang/Thread.run_[j];io/modelgateway/core/answer/AnswerWriter.content_[i] 15",
                "java/lang/Thread.run_[j];io/modelgateway/core/answer/AnswerWriter.head_[0] 5"));

        assertThat(s).contains("100 samples: kernel 40.0 %").contains("user code 60.0 %");
        assertThat(s).contains("Samples in C1-compiled or interpreted code: 35.0 %");
        assertThat(s).contains("| 40.00 | `io/modelgateway/core/answer/AnswerWriter.finish` |");
        assertThat(s).contains("| 60.00 | `io.modelgateway.core.answer` |");
        assertThat(s).doesNotContain("_[");
    }

    @Test
    void render_cpuPerRequestFromTheTicks(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("run"));
        Files.writeString(dir.resolve("run/profile.tsv"), "chat64\tnginx\t1000\t1\t3\t100\nchat64\tgateway\t1000\t3\t3\t100\n");
        Files.write(dir.resolve("profile.chat64.collapsed"), COLLAPSED);

        String r = ProfileReport.render(dir);

        assertThat(r).contains("### chat64").contains("| nginx | 1000 | 10.0 | 30.0 | 40.0 |")
                .contains("| gateway | 1000 | 30.0 | 30.0 | 60.0 |").contains("user code 35.0 %");
    }
}
