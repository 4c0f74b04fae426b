# frozen_string_literal: true

require_relative "test_helper"
require "open3"
require "tmpdir"

# The real service process, started through ./serve from another directory.
class ProcessTest < DetailsTest
  def test_bad_values_exit_2_with_one_line_naming_variable_and_value
    {
      { "HTTP_NODELAY" => "maybe" } => 'details: invalid HTTP_NODELAY="maybe": want true or false',
      { "HTTP_KEEPALIVE" => "1" } => 'details: invalid HTTP_KEEPALIVE="1": want true or false',
      { "PORT" => "70000" } => 'details: invalid PORT="70000": want an integer from 1 to 65535',
      { "SHUTDOWN_TIMEOUT_SECONDS" => "0" } =>
        'details: invalid SHUTDOWN_TIMEOUT_SECONDS="0": want an integer from 1 to 300',
      { "HTTP_HEADER_TIMEOUT_SECONDS" => "301" } =>
        'details: invalid HTTP_HEADER_TIMEOUT_SECONDS="301": want an integer from 1 to 300',
      { "HTTP_MAX_CONNECTIONS" => "0" } =>
        'details: invalid HTTP_MAX_CONNECTIONS="0": want an integer from 1 to 100000',
      { "LISTEN_ADDRESS" => "no.such.host.invalid" } => /\Adetails: invalid LISTEN_ADDRESS="no\.such\.host\.invalid": /
    }.each do |env, message|
      status, out, err = run_serve(env)
      assert_equal 2, status.exitstatus, env.inspect
      assert_equal "", out
      assert_equal 1, err.lines.size, err
      if message.is_a?(Regexp)
        assert_match message, err.chomp
      else
        assert_equal message, err.chomp
      end
    end
  end

  def test_serve_runs_from_any_directory_and_logs_access_on_stdout
    pid, port, out, err = spawn_serve("ACCESS_LOG" => "true", "LOG_LEVEL" => "warn")
    assert_equal 200, http(port, "GET", "/details/5").status
    # One line is spawn_serve's own GET /health. Each request's thread
    # writes its line after answering, so on a busy machine the two lines
    # can come in either order.
    lines = []
    eventually do
      out.wait_readable(0.1) && lines << out.gets
      lines.size >= 2
    end
    health, details = lines.partition { |l| l.include?(" /health ") }
    assert_match(%r{\A\S+Z details GET /health 200 \d+\.\d{3}\n\z}, health.first)
    assert_match(%r{\A\S+Z details GET /details/5 200 \d+\.\d{3}\n\z}, details.first)
    Process.kill("TERM", pid)
    status, = wait_exit(pid, 10)
    assert_equal 0, status.exitstatus
    # LOG_LEVEL=warn: no start or drain lines on stderr.
    assert_equal "", err.read
  end

  def test_sigterm_drains_in_flight_requests_and_closes_idle_connections
    pid, port, _out, err = spawn_serve("SHUTDOWN_TIMEOUT_SECONDS" => "5")
    idle = connect(port)
    assert_equal 200, http(port, "GET", "/health", sock: idle).status
    slow = connect(port)
    assert_equal 200, http(port, "GET", "/health", sock: slow).status
    # Half a request, and a moment for its thread to start reading it: the
    # request is then in flight.
    slow.write("GET /details/3 HTTP/1.1\r\nHost: x\r\n")
    sleep 0.2

    Process.kill("TERM", pid)
    assert eventually(3) { refused?(port) }, "still accepting connections after SIGTERM"
    assert closed_by_peer?(idle, timeout: 2), "idle keep-alive connection not closed"
    refute Process.wait(pid, Process::WNOHANG), "exited before the in-flight request finished"

    slow.write("\r\n")
    res = read_response(slow)
    assert_equal 200, res.status
    assert_includes res.body, '"id":3,'
    assert_equal "close", res.headers["connection"]
    status, waited = wait_exit(pid, 5)
    assert_equal 0, status.exitstatus
    assert_operator waited, :<, 2
    assert_match(/SIGTERM: draining/, err.read)
  ensure
    [idle, slow].compact.each(&:close)
  end

  # A client sends its next request on a kept-alive connection just as the drain begins: it gets its answer,
  # with a close, not a connection ended under it (DESIGN.md, "A drain that ends no connection under a request").
  def test_a_request_on_a_kept_alive_connection_just_after_sigterm_is_answered
    pid, port, = spawn_serve("SHUTDOWN_TIMEOUT_SECONDS" => "5")
    socks = Array.new(4) { connect(port) }
    socks.each { |sock| assert_equal 200, http(port, "GET", "/health", sock: sock).status }

    Process.kill("TERM", pid)
    sleep 0.2
    socks.each { |sock| sock.write(request_text("GET", "/details/1")) }
    answers = socks.map { |sock| read_response(sock) }
    got = answers.map { |res| [res.status, res.headers["connection"]] }
    assert_equal [[200, "close"]] * socks.size, got
    status, = wait_exit(pid, 5)
    assert_equal 0, status.exitstatus
  ensure
    socks&.each(&:close)
  end

  def test_shutdown_timeout_bounds_a_stuck_request
    pid, port, _out, err = spawn_serve("SHUTDOWN_TIMEOUT_SECONDS" => "1")
    stuck = connect(port)
    assert_equal 200, http(port, "GET", "/health", sock: stuck).status
    stuck.write("GET /details/3 HTTP/1.1\r\n")
    sleep 0.2
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    Process.kill("INT", pid)
    status, = wait_exit(pid, 5)
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    assert_equal 1, status.exitstatus, "a drain cut short must not exit 0"
    assert_operator elapsed, :>=, 0.9, "did not wait for the stuck request"
    assert_operator elapsed, :<, 2.5, "ignored SHUTDOWN_TIMEOUT_SECONDS=1"
    assert_match(/still busy after 1 s/, err.read)
  ensure
    stuck&.close
  end

  # A Kubernetes emptyDir is mode 0777 without the sticky bit, which Ruby's
  # Dir.tmpdir refuses; the service must start with one as its /tmp.
  def test_starts_with_a_tmpdir_like_a_kubernetes_empty_dir
    Dir.mktmpdir do |parent|
      tmp = File.join(parent, "empty-dir")
      Dir.mkdir(tmp)
      File.chmod(0o777, tmp)
      # (unset: an earlier test in this process configured the library)
      pid, port, = spawn_serve("TMPDIR" => tmp, "prometheus_multiproc_dir" => nil)
      assert_equal 200, http(port, "GET", "/health").status
      made = Dir.children(tmp)
      assert_equal 1, made.size, made.inspect
      assert_equal 0o700, File.stat(File.join(tmp, made.first)).mode & 0o777
      Process.kill("TERM", pid)
      status, = wait_exit(pid, 20)
      assert status.success?, status.inspect
      assert_empty Dir.children(tmp), "the directory is removed at exit"
    end
  end

  def test_missing_ruby_and_webrick_are_reported
    Dir.mktmpdir do |bin|
      %w[bash env dirname].each { |tool| File.symlink(which(tool), File.join(bin, tool)) }
      out, status = Open3.capture2e({ "PATH" => bin }, File.join(APP_DIR, "serve"))
      assert_equal [1, "details: ruby missing; run 'make setup'\n"], [status.exitstatus, out]
    end
    # Without RubyGems, the Debian WEBrick gem cannot be found.
    out, status = Open3.capture2e("ruby", "--disable-gems", File.join(APP_DIR, "bin", "details"))
    assert_equal [1, "details: ruby-webrick missing; run 'make setup'\n"], [status.exitstatus, out]
  end

  private

  def which(tool)
    ENV.fetch("PATH").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, tool) }.find { |f| File.executable?(f) }
  end

  def refused?(port)
    connect(port).close
    false
  rescue Errno::ECONNREFUSED
    true
  end
end
