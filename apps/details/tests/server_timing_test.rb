# frozen_string_literal: true

require_relative "test_helper"

# The Server-Timing header (docs/contract.md): app;dur=<ms> on every answer
# the routes make, none with SERVER_TIMING=false.
class ServerTimingTest < DetailsTest
  APP_ONLY = /\Aapp;dur=\d+\.\d{3}\z/

  def test_every_route_answers_with_its_own_time
    port = start_server.port
    [["GET", "/details/0", 200], ["HEAD", "/details/0", 200], ["GET", "/details/abc", 400],
     ["GET", "/health", 200], ["GET", "/metrics", 200], ["GET", "/nowhere", 404],
     ["POST", "/details/0", 405], ["OPTIONS", "/health", 405]].each do |method, path, status|
      res = http(port, method, path)
      assert_equal status, res.status, "#{method} #{path}"
      assert_match APP_ONLY, res.headers["server-timing"].to_s, "#{method} #{path}"
    end
  end

  def test_the_time_covers_the_servlet
    server = start_server
    slow = Class.new(Details::Servlets::Route) do
      const_set(:ROUTE, "/slow")
      define_method(:do_GET) do |_req, res|
        sleep 0.05
        json(res, 200, "{}")
      end
    end
    server.mount("/slow", slow)
    ms = http(server.port, "GET", "/slow").headers["server-timing"][/dur=([0-9.]+)/, 1].to_f
    assert_operator ms, :>=, 50.0
  end

  # The clock starts at the request's first byte: a request line cut for 100 ms
  # counts at least 50 (WEBrick may read the first part late on a busy machine).
  def test_the_time_covers_the_read_of_the_head
    sock = connect(start_server.port)
    text = request_text("GET", "/details/0")
    sock.write(text[0, 5])
    sleep 0.1
    sock.write(text[5..])
    ms = read_response(sock).headers["server-timing"][/dur=([0-9.]+)/, 1].to_f
    assert_operator ms, :>=, 50.0
  ensure
    sock&.close
  end

  def test_server_timing_false_sends_none
    port = start_server("SERVER_TIMING" => "false").port
    ["/details/0", "/nowhere"].each do |path|
      assert_nil http(port, "GET", path).headers["server-timing"], path
    end
  end
end
