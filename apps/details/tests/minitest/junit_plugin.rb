# frozen_string_literal: true

# A minitest plugin (minitest finds minitest/*_plugin.rb on the load path):
# with JUNIT_DIR set, it also writes the results as JUnit XML to
# $JUNIT_DIR/details.xml, next to minitest's own console report. Debian's
# minitest-reporters names every test class "Minitest::Result" on the minitest
# Debian ships, so this small reporter through minitest's plugin API it is.

require "fileutils"
require "rexml/document"

module Minitest
  def self.plugin_junit_init(_options)
    dir = ENV.fetch("JUNIT_DIR", "")
    reporter << JUnitReporter.new(File.join(dir, "details.xml")) unless dir.empty?
  end

  # Collects every result and writes one <testsuites> document at the end.
  class JUnitReporter < AbstractReporter
    def initialize(path)
      super()
      @path = path
      @results = []
    end

    def record(result)
      @results << result
    end

    def report
      doc = REXML::Document.new
      doc << REXML::XMLDecl.new("1.0", "UTF-8")
      suites = doc.add_element("testsuites", "name" => "details")
      @results.group_by(&:klass).sort.each { |klass, results| add_suite(suites, klass, results) }
      FileUtils.mkdir_p(File.dirname(@path))
      tmp = "#{@path}.tmp"
      File.open(tmp, "w") { |f| doc.write(output: f, indent: 2) }
      File.rename(tmp, @path)
    end

    private

    def add_suite(parent, klass, results)
      suite = parent.add_element("testsuite", "name" => klass, "tests" => results.size.to_s,
                                              "failures" => results.count { |r| failed?(r) }.to_s,
                                              "errors" => results.count { |r| r.failure.is_a?(UnexpectedError) }.to_s,
                                              "skipped" => results.count(&:skipped?).to_s,
                                              "time" => format("%.3f", results.sum(&:time)))
      results.each { |r| add_case(suite, klass, r) }
    end

    def failed?(result)
      !result.passed? && !result.skipped? && !result.failure.is_a?(UnexpectedError)
    end

    def add_case(suite, klass, result)
      tc = suite.add_element("testcase", "classname" => klass, "name" => result.name,
                                         "time" => format("%.3f", result.time))
      failure = result.failure
      return unless failure

      if result.skipped?
        tc.add_element("skipped", "message" => failure.message)
      else
        kind = failure.is_a?(UnexpectedError) ? "error" : "failure"
        el = tc.add_element(kind, "message" => failure.message, "type" => failure.result_label)
        el.text = "#{failure.message}\n#{(failure.backtrace || []).first(10).join("\n")}"
      end
    end
  end
end
