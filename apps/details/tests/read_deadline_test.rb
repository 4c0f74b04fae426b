# frozen_string_literal: true

require_relative "test_helper"
require "details/read_deadline"

class ReadDeadlineTest < DetailsTest
  class Expired < StandardError; end

  def setup
    @now = 100.0
    # A reaper interval long enough that only explicit #expire calls count.
    @deadlines = Details::ReadDeadline.new(interval: 3600, clock: -> { @now })
  end

  def test_raises_in_a_thread_still_blocked_after_its_deadline
    reader, writer = IO.pipe
    entered = Queue.new
    thread = Thread.new do
      @deadlines.within(5, Expired) do
        entered << true
        reader.gets
      end
    end
    entered.pop
    @now += 4.9
    @deadlines.expire
    assert thread.alive?, "expired before its deadline"
    @now += 0.2
    @deadlines.expire
    assert_raises(Expired) { thread.join(5) }
  ensure
    [reader, writer].each(&:close)
  end

  def test_a_finished_block_is_never_interrupted
    assert_equal :done, @deadlines.within(1, Expired) { :done }
    @now += 10
    @deadlines.expire
    assert_equal :again, @deadlines.within(1, Expired) { :again }
  end

  def test_request_read_timeout_answers_408_and_closes
    port = start_server("HTTP_KEEPALIVE_TIMEOUT_SECONDS" => "1").port
    sock = connect(port)
    sock.write("GET /details/1 HTTP/1.1\r\nHost: x\r\n")
    res = read_response(sock, timeout: 3)
    assert_equal 408, res.status
    assert_equal '{"error":"request timeout"}', res.body
    assert closed_by_peer?(sock)
  ensure
    sock&.close
  end
end
